#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/errors.h"
#include "maintenance_step.h"

namespace tributary::maintenance {

/// The role the maintainer connects as may not execute the maintainer's functions (it is not a
/// member of tributary_maintainer). Not routine: `maintain` fails on it, `run` warns once and goes
/// on loading without a maintainer.
class MaintainerForbidden : public PermissionDenied {
public:
    using PermissionDenied::PermissionDenied;
};

/// The port to the one maintainer lease all processes compete for (tributary.maintainer_lease).
/// Times are the store's own clock. Not thread-safe: one maintainer owns one store.
class LeaseStore {
public:
    virtual ~LeaseStore() = default;
    /// Takes the lease for `lease` when it is free or expired, or renews it when `holder` holds it
    /// already. Returns the token: the same while `holder` keeps renewing in time, a greater one
    /// when it took the lease anew. nullopt: another holder holds it unexpired.
    /// Throws DatabaseUnavailable, MaintainerForbidden.
    virtual std::optional<std::int64_t> acquire(const std::string& holder, std::chrono::milliseconds lease) = 0;
    /// Gives the lease up at once, if `lease` is still the held one (else does nothing).
    virtual void release(const MaintainerLease& lease) = 0;
};

}  // namespace tributary::maintenance
