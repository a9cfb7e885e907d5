#include "session_pooling.h"

#include <spdlog/spdlog.h>

#include "postgres/shown_database.h"

namespace tributary::cli {

postgres::SessionProbe probe_and_log(const std::string& db) {
    const auto found = postgres::probe_session_keeping(db);
    if (found.keeping == postgres::SessionKeeping::kept && found.through_proxy)
        spdlog::info(
            "database {} is reached through a proxy that keeps each session on one server session "
            "(a pooler in session mode): fine",
            postgres::shown_database(db));
    return found;
}

std::string shared_sessions_refusal(const std::string& db, const OwnSessions& needs, const std::string& evidence,
                                    const std::string& instead) {
    return "`tributary " + needs.command + "` needs database sessions of its own (it keeps " + needs.holds +
           " on them), but " + postgres::shown_database(db) +
           " hands server sessions to other clients between transactions: a connection pooler in transaction or "
           "statement mode (such as PgBouncer's pool_mode=transaction) is in between (" +
           evidence +
           "). Nothing was locked or changed. Point this command straight at PostgreSQL, or at a pool in session "
           "mode" +
           (instead.empty() ? "" : ", or " + instead) + "; see " + kPoolerDocs + ".";
}

void require_own_sessions(const std::string& db, const OwnSessions& needs) {
    const auto found = probe_and_log(db);
    if (found.keeping == postgres::SessionKeeping::shared)
        throw SharedSessionsRefused(shared_sessions_refusal(db, needs, found.evidence));
}

}  // namespace tributary::cli
