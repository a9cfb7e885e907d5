#pragma once

#include <string>

#include "core/clock.h"
#include "maintenance/lease_store.h"

namespace tributary::fakes {

/// The maintainer's lease in memory, on a test's clock, shared by the maintainers of a test as
/// the row is: the same rules as sql/internal/81_maintainer.sql.
class FakeLeaseStore : public maintenance::LeaseStore {
public:
    explicit FakeLeaseStore(const Clock& clock) : clock_(clock) {}

    std::optional<std::int64_t> acquire(const std::string& holder, std::chrono::milliseconds lease) override;
    void release(const maintenance::MaintainerLease& lease) override;

    /// maintainer_fence: throws LeaseLost unless `lease` is the held one, unexpired.
    void fence(const maintenance::MaintainerLease& lease) const;

    std::string holder;
    std::int64_t token = 0;
    Clock::time_point expires_at{};

private:
    const Clock& clock_;
};

}  // namespace tributary::fakes
