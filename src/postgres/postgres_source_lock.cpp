#include "postgres_source_lock.h"

#include <spdlog/spdlog.h>

#include "advisory_keys.h"

namespace tributary::postgres {

namespace {
constexpr const char* kTryLock = "tributary_try_source_lock";
constexpr const char* kUnlock = "tributary_source_unlock";
}  // namespace

PostgresSourceLock::PostgresSourceLock(PostgresSession& session) : session_(session) {
    session_.prepare(kTryLock, "SELECT pg_try_advisory_lock($1, $2)");
    session_.prepare(kUnlock, "SELECT pg_advisory_unlock($1, $2)");
}

bool PostgresSourceLock::try_acquire(int source_id) {
    const bool acquired = session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        return tx.exec_prepared1(kTryLock, kAdvisoryNamespace, source_id)[0].as<bool>();
    });
    if (acquired) held_[source_id] = session_.generation();
    return acquired;
}

void PostgresSourceLock::release(int source_id) noexcept {
    const auto it = held_.find(source_id);
    if (it == held_.end()) return;
    const auto generation = it->second;
    held_.erase(it);
    // A lock taken on an earlier connection died with it; unlocking on the
    // new one would only earn a server warning.
    if (!session_.connected() || generation != session_.generation()) return;
    try {
        session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            tx.exec_prepared(kUnlock, kAdvisoryNamespace, source_id);
        });
    } catch (const std::exception& e) {
        spdlog::debug("source_id={} lock release failed (the session is gone, so is the lock): {}", source_id,
                      e.what());
    }
}

}  // namespace tributary::postgres
