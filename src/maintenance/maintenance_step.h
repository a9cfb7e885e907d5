#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tributary::maintenance {

/// The lease a maintainer holds while it acts: every change to the log names it (maintainer_fence).
struct MaintainerLease {
    std::string holder;
    std::int64_t token = 0;
};

/// One thing a maintainer does on each pass while it holds the lease. Throws LeaseLost when the
/// database says the lease is gone (SQLSTATE TR001); anything else it throws is logged by the pass
/// and the pass goes on with the next step.
class MaintenanceStep {
public:
    virtual ~MaintenanceStep();
    virtual const char* name() const = 0;
    virtual void run(const MaintainerLease& lease) = 0;
};

/// The database refused a fenced transaction: another maintainer holds the lease now, or it lapsed.
/// The pass stops acting at once.
class LeaseLost : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace tributary::maintenance
