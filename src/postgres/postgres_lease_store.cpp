#include "postgres_lease_store.h"

#include "postgres/statements.h"

namespace tributary::postgres {
namespace {}  // namespace

PostgresLeaseStore::PostgresLeaseStore(PostgresSession& session, Lease lease)
    : session_(session),
      acquire_(lease == Lease::herald ? "herald_acquire" : "maintainer_acquire"),
      release_(lease == Lease::herald ? "herald_release" : "maintainer_release") {
    session_.prepare(acquire_, lease == Lease::herald ? statements::herald::acquire : statements::maintainer::acquire);
    session_.prepare(release_, lease == Lease::herald ? statements::herald::release : statements::maintainer::release);
}

std::optional<std::int64_t> PostgresLeaseStore::acquire(const std::string& holder, std::chrono::milliseconds lease) {
    return session_.run([&](pqxx::connection& c) -> std::optional<std::int64_t> {
        try {
            pqxx::nontransaction tx(c);
            const auto rows = tx.exec_prepared(acquire_, holder, static_cast<double>(lease.count()) / 1000.0);
            if (rows.empty() || rows[0][0].is_null()) return std::nullopt;
            return rows[0][0].as<std::int64_t>();
        } catch (const pqxx::sql_error& e) {
            throw_if_maintainer_error(e);
            throw;
        }
    });
}

void PostgresLeaseStore::release(const maintenance::MaintainerLease& lease) {
    session_.run([&](pqxx::connection& c) {
        try {
            pqxx::nontransaction tx(c);
            tx.exec_prepared(release_, lease.holder, lease.token);
        } catch (const pqxx::sql_error& e) {
            throw_if_maintainer_error(e);
            throw;
        }
    });
}

}  // namespace tributary::postgres
