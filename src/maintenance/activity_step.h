#pragma once

#include <chrono>

#include "activity_fold.h"
#include "maintenance_step.h"

namespace tributary::maintenance {

/// How much one pass folds: `chunk` events a call, calls until one folds fewer (caught up) or
/// `budget` has gone, so that a large backlog (a first fold, a maintainer that was away) is
/// folded over several passes rather than holding up the pass's other steps.
struct ActivitySettings {
    int chunk = 20000;
    std::chrono::milliseconds budget{2000};
};

/// The maintainer's activity step: the console's per-minute counts kept up with the log.
class ActivityStep : public MaintenanceStep {
public:
    explicit ActivityStep(ActivityFold& fold, ActivitySettings settings = {}) : fold_(fold), settings_(settings) {}
    const char* name() const override { return "activity"; }
    void run(const MaintainerLease& lease) override;

private:
    ActivityFold& fold_;
    ActivitySettings settings_;
};

}  // namespace tributary::maintenance
