#pragma once

#include <chrono>
#include <utility>

#include "activity_fold.h"
#include "lease_renewal.h"
#include "maintenance_step.h"

namespace tributary::maintenance {

/// How much one pass folds: `chunk` events a call, calls until one folds fewer (caught up) or
/// `budget` has gone. The maintainer gives it its pass interval: folding may take at most half
/// the maintainer's time, and a large backlog (a first fold, a maintainer that was away) is
/// folded over several passes, the pass's other steps running in between.
struct ActivitySettings {
    int chunk = 20000;
    std::chrono::milliseconds budget{60000};
};

/// The maintainer's activity step: the console's per-minute counts kept up with the log.
class ActivityStep : public MaintenanceStep {
public:
    /// `renewal` keeps the lease while a budget longer than the lease is spent.
    explicit ActivityStep(ActivityFold& fold, ActivitySettings settings = {}, LeaseRenewal renewal = {})
        : fold_(fold), settings_(settings), renewal_(std::move(renewal)) {}
    const char* name() const override { return "activity"; }
    void run(const MaintainerLease& lease) override;

private:
    ActivityFold& fold_;
    ActivitySettings settings_;
    LeaseRenewal renewal_;
};

}  // namespace tributary::maintenance
