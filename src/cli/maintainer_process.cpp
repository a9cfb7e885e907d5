#include "maintainer_process.h"

#include "duration.h"
#include "postgres/partition_steps.h"
#include "usage_error.h"

namespace tributary::cli {

maintenance::MaintainerTimings MaintainerFlags::timings() const {
    maintenance::MaintainerTimings timings;
    timings.lease = parse_duration(lease);
    timings.interval = parse_duration(interval);
    // The lease is renewed every third of it: below a second, one slow round trip would cost it.
    if (timings.lease < std::chrono::seconds(1)) throw UsageError("the maintainer's lease must be at least 1s");
    return timings;
}

MaintainerProcess::MaintainerProcess(const std::string& db, const MaintainerFlags& flags, std::string holder)
    : timings_(flags.timings()), session_(db), store_(session_), fence_(session_, timings_.lease) {
    steps_.push_back(std::make_unique<postgres::ObservePartitionsStep>(fence_));
    steps_.push_back(std::make_unique<postgres::PartitionsAheadStep>(fence_));
    // Retention's step comes here, after the partitions' (it drops what they observed sealed).
    std::vector<maintenance::MaintenanceStep*> steps;
    for (const auto& step : steps_) steps.push_back(step.get());
    maintainer_ = std::make_unique<maintenance::Maintainer>(store_, std::move(steps), std::move(holder), timings_);
}

}  // namespace tributary::cli
