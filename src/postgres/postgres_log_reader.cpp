#include "postgres_log_reader.h"

#include "optional_field.h"
#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

constexpr const char* kReadLog = "tributary_read_log";
}  // namespace

PostgresLogReader::PostgresLogReader(PostgresSession& session) : session_(session) {
    session_.prepare(kReadLog, statements::log_reader::read_log);
}

LogPosition PostgresLogReader::position(const std::string& from) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            const auto row = tx.exec_params1(statements::log_reader::position, from);
            return LogPosition{row[0].as<std::string>(), row[1].as<std::int64_t>()};
        });
    } catch (const pqxx::sql_error& e) {
        throw_api_error(e);
    }
}

std::vector<PositionedEvent> PostgresLogReader::read(const std::string& pattern, const LogPosition& after, int max) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            std::vector<PositionedEvent> out;
            for (const auto& row : session_.exec(tx, kReadLog, pattern, after.tx_id, after.seq, max))
                out.push_back(PositionedEvent{{row[0].as<std::string>(), row[1].as<std::int64_t>()},
                                              row[2].as<std::string>(),
                                              optional_field<std::int64_t>(row[3]),
                                              row[4].as<std::string>(),
                                              row[5].as<std::string>(),
                                              row[6].as<std::string>()});
            return out;
        });
    } catch (const pqxx::sql_error& e) {
        throw_api_error(e);
    }
}

}  // namespace tributary::postgres
