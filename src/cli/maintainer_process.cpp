#include "maintainer_process.h"

#include "duration.h"
#include "maintenance/activity_step.h"
#include "maintenance/retention_step.h"
#include "postgres/partition_steps.h"
#include "usage_error.h"

namespace tributary::cli {

maintenance::ElectionTimings MaintainerFlags::timings() const {
    maintenance::ElectionTimings timings;
    timings.lease = parse_duration(lease);
    timings.interval = parse_duration(interval);
    // The lease is renewed every third of it: below a second, one slow round trip would cost it.
    if (timings.lease < std::chrono::seconds(1))
        throw UsageError("--" + prefix + "lease '" + lease + "': the maintainer's lease must be at least 1s, e.g. 30s");
    return timings;
}

namespace {

/// Renews the lease while an archive streams, as often as the maintainer itself does (every
/// third of it), on the maintainer's session: the COPY runs on a connection of its own, so the
/// session is free. Any answer but the same token means the lease is not ours as it was.
maintenance::LeaseRenewal lease_renewal(maintenance::LeaseStore& store, const maintenance::ElectionTimings& timings) {
    const auto lease = timings.lease;
    return {lease / 3, [&store, lease](const maintenance::MaintainerLease& held) {
                const auto token = store.acquire(held.holder, lease);
                if (!token || *token != held.token) throw maintenance::LeaseLost("the lease lapsed during a long step");
            }};
}

}  // namespace

MaintainerProcess::MaintainerProcess(const std::string& db, const MaintainerFlags& flags, std::string holder)
    : timings_(flags.timings()),
      session_(db),
      store_(session_),
      fence_(session_, timings_.lease),
      retention_(fence_, db),
      activity_(fence_) {
    steps_.push_back(std::make_unique<postgres::ObservePartitionsStep>(fence_));
    steps_.push_back(std::make_unique<postgres::PartitionsAheadStep>(fence_));
    // After the partitions' steps: retention drops what observe found sealed in the same pass.
    steps_.push_back(
        std::make_unique<maintenance::RetentionStep>(retention_, flags.archive(), lease_renewal(store_, timings_)));
    // Last: the console's per-minute counts, for at most one interval (the lease renewed meanwhile),
    // so that the log's own steps still run every pass while a large backlog is folded.
    steps_.push_back(std::make_unique<maintenance::ActivityStep>(
        activity_, maintenance::ActivitySettings{20000, timings_.interval}, lease_renewal(store_, timings_)));
    std::vector<maintenance::MaintenanceStep*> steps;
    for (const auto& step : steps_) steps.push_back(step.get());
    maintainer_ =
        std::make_unique<maintenance::ElectedRole>("maintainer", store_, std::move(steps), std::move(holder), timings_);
}

}  // namespace tributary::cli
