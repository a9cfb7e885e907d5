#pragma once

#include "maintenance_step.h"

namespace tributary::maintenance {

/// The console's per-minute counts (docs/console.md "History for charts"): folds the events
/// stored since the last fold into them. Exactly once however many maintainers call it.
class ActivityFold {
public:
    virtual ~ActivityFold() = default;
    /// Counts about `max` more events (those every transaction below is done with); returns
    /// how many. Fewer than `max`: the fold has caught up. Throws LeaseLost as a step does.
    virtual int fold(const MaintainerLease& lease, int max) = 0;
};

}  // namespace tributary::maintenance
