#pragma once

#include <chrono>
#include <functional>

#include "maintenance_step.h"

namespace tributary::maintenance {

/// How a step that runs longer than the lease keeps it: the maintainer renews
/// it only between steps. `renew` is called between the step's chunks of work
/// once `every` has passed since the step began or last renewed; it throws
/// LeaseLost when the lease is gone, and the step stops there.
struct LeaseRenewal {
    std::chrono::milliseconds every{10000};
    std::function<void(const MaintainerLease&)> renew;
};

}  // namespace tributary::maintenance
