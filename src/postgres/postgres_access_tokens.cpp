#include "postgres_access_tokens.h"

#include "postgres/statements.h"

namespace tributary::postgres {
namespace {

namespace sql = statements::access_tokens;

constexpr const char* kCurrent = "access_tokens_current";
constexpr const char* kBecomeRefresher = "access_tokens_become_refresher";
constexpr const char* kStore = "access_tokens_store";
constexpr const char* kReject = "access_tokens_reject";

double seconds(std::chrono::seconds s) { return static_cast<double>(s.count()); }

}  // namespace

PostgresAccessTokens::PostgresAccessTokens(PostgresSession& session) : session_(session) {
    session_.prepare(kCurrent, sql::current);
    session_.prepare(kBecomeRefresher, sql::become_refresher);
    session_.prepare(kStore, sql::store);
    session_.prepare(kReject, sql::reject);
}

std::optional<AccessToken> PostgresAccessTokens::current(int source_id) {
    return session_.run([&](pqxx::connection& c) -> std::optional<AccessToken> {
        pqxx::nontransaction tx(c);
        const auto rows = tx.exec_prepared(kCurrent, source_id);
        if (rows.empty()) return std::nullopt;
        return AccessToken{rows[0][0].as<std::string>(), rows[0][1].as<std::int64_t>(), rows[0][2].as<bool>(false)};
    });
}

bool PostgresAccessTokens::try_become_refresher(int source_id, std::int64_t seen, std::chrono::seconds lease) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        return !tx.exec_prepared(kBecomeRefresher, source_id, seen, seconds(lease)).empty();
    });
}

void PostgresAccessTokens::store(int source_id, const std::string& value, std::chrono::seconds lifetime,
                                 std::chrono::seconds renew_after) {
    session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        tx.exec_prepared(kStore, source_id, value, seconds(lifetime), seconds(renew_after));
    });
}

void PostgresAccessTokens::reject(int source_id, std::int64_t generation) {
    session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        tx.exec_prepared(kReject, source_id, generation);
    });
}

}  // namespace tributary::postgres
