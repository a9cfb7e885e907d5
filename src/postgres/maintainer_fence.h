#pragma once

#include <chrono>
#include <string>

#include <pqxx/pqxx>

#include "maintenance/lease_store.h"
#include "maintenance/maintenance_step.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// Transactions on the maintainer's behalf (sql/internal/81_maintainer.sql): each begins with
/// maintainer_fence, so that it commits only while its lease is the held one, and keeps a
/// takeover waiting until it ends. Its timeouts are a fraction of the lease: statements at most
/// lease/2 (a pass keeps a successor waiting no longer than that), idling in the transaction at
/// most lease/3 (a stalled or stopped maintainer's transaction is ended by the server well before
/// its lease lapses, so a successor never waits on a process that does not run).
/// Retention's steps use it too.
class MaintainerFence {
public:
    MaintainerFence(PostgresSession& session, std::chrono::milliseconds lease);

    /// Runs `work(tx)` in one fenced transaction and commits. Throws LeaseLost (SQLSTATE TR001),
    /// MaintainerForbidden (42501 on a maintainer function), DatabaseUnavailable, or what `work`
    /// throws.
    template <typename Work>
    void run(const maintenance::MaintainerLease& lease, Work&& work) {
        run_limited(lease, statement_timeout_ms_, std::forward<Work>(work));
    }

    /// As run, with no statement timeout: for a statement whose work grows with a partition
    /// (retention's drop deletes the keys of all its text-keyed events). A live maintainer's long
    /// statement only delays a successor (it waits on the fence's share lock, never acts beside
    /// it); a stopped one's transaction still ends at the idle limit once the statement is done.
    template <typename Work>
    void run_unlimited(const maintenance::MaintainerLease& lease, Work&& work) {
        run_limited(lease, "0", std::forward<Work>(work));
    }

    PostgresSession& session() { return session_; }

private:
    template <typename Work>
    void run_limited(const maintenance::MaintainerLease& lease, const std::string& statement_timeout_ms, Work&& work) {
        session_.run([&](pqxx::connection& c) {
            try {
                pqxx::work tx(c);
                begin(tx, lease, statement_timeout_ms);
                work(tx);
                tx.commit();
            } catch (const pqxx::sql_error& e) {
                translate(e);
                throw;
            }
        });
    }

    void begin(pqxx::work& tx, const maintenance::MaintainerLease& lease, const std::string& statement_timeout_ms);
    /// Throws the domain error `e` means, if it means one.
    static void translate(const pqxx::sql_error& e);

    PostgresSession& session_;
    const std::string statement_timeout_ms_;
    const std::string idle_timeout_ms_;
};

/// The domain error of a SQLSTATE from a maintainer function, if it is one: LeaseLost (TR001),
/// MaintainerForbidden (42501). Returns otherwise.
void throw_if_maintainer_error(const pqxx::sql_error& e);

}  // namespace tributary::postgres
