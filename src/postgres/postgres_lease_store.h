#pragma once

#include "maintainer_fence.h"
#include "maintenance/lease_store.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// The two leases processes compete for, each one row.
enum class Lease {
    maintainer,  ///< tributary.maintainer_lease (sql/internal/81_maintainer.sql)
    herald,      ///< tributary.herald_lease (sql/internal/87_herald.sql)
};

/// LeaseStore on one of them (its _acquire/_release functions), one autocommitted statement
/// each; times are the database's clock.
class PostgresLeaseStore : public maintenance::LeaseStore {
public:
    explicit PostgresLeaseStore(PostgresSession& session, Lease lease = Lease::maintainer);

    std::optional<std::int64_t> acquire(const std::string& holder, std::chrono::milliseconds lease) override;
    void release(const maintenance::MaintainerLease& lease) override;

private:
    PostgresSession& session_;
    const char* acquire_;  ///< the prepared statements' names
    const char* release_;
};

}  // namespace tributary::postgres
