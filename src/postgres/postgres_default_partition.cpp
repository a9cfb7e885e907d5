#include "postgres_default_partition.h"

#include "api_call.h"
#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

namespace sql = statements::default_partition;

}  // namespace

std::string PostgresDefaultPartition::horizon() {
    return api_call(session_, [](pqxx::nontransaction& tx) { return tx.exec1(sql::horizon)[0].as<std::string>(); });
}

PostgresDefaultPartition::Outcome PostgresDefaultPartition::move_next(int max_events, const std::string& below) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            Outcome out;
            const auto rows = tx.exec_params(sql::move, max_events, below);
            if (rows.empty()) return out;
            const auto& r = rows[0];
            out.moved = DefaultPartitionMove{r[0].as<std::string>(), r[1].as<std::string>(), r[2].as<std::string>(),
                                             r[3].as<std::int64_t>(), r[4].as<double>(), r[5].as<double>()};
            return out;
        });
    } catch (const pqxx::sql_error& e) {
        if (!is_retryable(e)) throw_api_error(e);
        Outcome out;
        out.busy = true;
        out.busy_reason = server_message(e);
        return out;
    }
}

DefaultPartitionLeft PostgresDefaultPartition::left() {
    return api_call(session_, [](pqxx::nontransaction& tx) {
        const auto r = tx.exec1(sql::left);
        return DefaultPartitionLeft{r[0].as<std::int64_t>(), r[1].as<std::int64_t>()};
    });
}

}  // namespace tributary::postgres
