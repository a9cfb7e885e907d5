#pragma once

#include "maintainer_fence.h"
#include "maintenance/activity_fold.h"

namespace tributary::postgres {

/// The console's per-minute counts folded by tributary.activity_fold (sql/internal/84_activity.sql),
/// one fenced transaction per call on the maintainer's session.
class PostgresActivity : public maintenance::ActivityFold {
public:
    explicit PostgresActivity(MaintainerFence& fence);
    int fold(const maintenance::MaintainerLease& lease, int max) override;

private:
    MaintainerFence& fence_;
};

}  // namespace tributary::postgres
