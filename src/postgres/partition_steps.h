#pragma once

#include "maintainer_fence.h"
#include "maintenance/maintenance_step.h"

namespace tributary::postgres {

/// The maintainer's first step: observe_partitions (the rate transaction ids are used at; when
/// each partition started, ended, was sealed; a sealed one's size and sources), fenced.
class ObservePartitionsStep : public maintenance::MaintenanceStep {
public:
    explicit ObservePartitionsStep(MaintainerFence& fence);
    const char* name() const override { return "observe"; }
    void run(const maintenance::MaintainerLease& lease) override;

private:
    MaintainerFence& fence_;
};

/// The second: partitions_ahead (the partitions the next spans need), fenced; logs each created.
class PartitionsAheadStep : public maintenance::MaintenanceStep {
public:
    explicit PartitionsAheadStep(MaintainerFence& fence);
    const char* name() const override { return "partitions-ahead"; }
    void run(const maintenance::MaintainerLease& lease) override;

private:
    MaintainerFence& fence_;
};

}  // namespace tributary::postgres
