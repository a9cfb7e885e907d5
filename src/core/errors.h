#pragma once

#include <stdexcept>
#include <string>

namespace tributary {

/// The shared database cannot be reached (down, connection lost, timed out).
/// The outcome of a write in flight is unknown: whoever catches this re-reads
/// the cursor before doing anything else. Adapters reconnect on next use.
class DatabaseUnavailable : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The database refused the content of a batch (e.g. a value jsonb cannot
/// hold). Nothing of the batch is stored; the source is at fault.
class BatchRejected : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The database refused this login role something its command needs
/// (SQLSTATE 42501, insufficient_privilege): a grant is missing, and no
/// retry helps. Commands stop on it; the CLI says which group role to grant
/// (src/cli/permission_refusal.h).
class PermissionDenied : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace tributary
