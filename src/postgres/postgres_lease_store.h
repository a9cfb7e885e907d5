#pragma once

#include "maintainer_fence.h"
#include "maintenance/lease_store.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// LeaseStore on tributary.maintainer_lease (maintainer_acquire/release), one autocommitted
/// statement each; times are the database's clock.
class PostgresLeaseStore : public maintenance::LeaseStore {
public:
    explicit PostgresLeaseStore(PostgresSession& session);

    std::optional<std::int64_t> acquire(const std::string& holder, std::chrono::milliseconds lease) override;
    void release(const maintenance::MaintainerLease& lease) override;

private:
    PostgresSession& session_;
};

}  // namespace tributary::postgres
