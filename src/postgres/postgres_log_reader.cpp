#include "postgres_log_reader.h"

#include "optional_field.h"
#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

constexpr const char* kReadLog = "tributary_read_log";

PositionedEvent event_of(const pqxx::row& row, int first, int lane) {
    return PositionedEvent{{row[first].as<std::string>(), row[first + 1].as<std::int64_t>()},
                           row[first + 2].as<std::string>(),
                           optional_field<std::int64_t>(row[first + 3]),
                           row[first + 4].as<std::string>(),
                           row[first + 5].as<std::string>(),
                           row[first + 6].as<std::string>(),
                           lane};
}

}  // namespace

PostgresLogReader::PostgresLogReader(PostgresSession& session) : session_(session) {
    session_.prepare(kReadLog, statements::log_reader::read_log);
}

ReadPosition PostgresLogReader::position(const std::string& from) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            ReadPosition position;
            // On Citus a position per lane; no row on one PostgreSQL.
            for (const auto& row : tx.exec_params(statements::log_reader::lane_positions, from))
                position.lanes.push_back(LogPosition{row[1].as<std::string>(), row[2].as<std::int64_t>()});
            if (position.by_lane()) return position;
            const auto row = tx.exec_params1(statements::log_reader::position, from);
            position.log = LogPosition{row[0].as<std::string>(), row[1].as<std::int64_t>()};
            return position;
        });
    } catch (const pqxx::sql_error& e) {
        throw_api_error(e);
    }
}

std::vector<PositionedEvent> PostgresLogReader::read(const std::string& pattern, ReadPosition& position, int max) {
    if (position.by_lane()) return read_lanes(pattern, position, max);
    auto events = read_one_order(pattern, position.log, max);
    if (!events.empty()) position.log = events.back().position;
    return events;
}

std::vector<PositionedEvent> PostgresLogReader::read_one_order(const std::string& pattern, const LogPosition& after,
                                                               int max) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            std::vector<PositionedEvent> out;
            for (const auto& row : session_.exec(tx, kReadLog, pattern, after.tx_id, after.seq, max))
                out.push_back(event_of(row, 0, -1));
            return out;
        });
    } catch (const pqxx::sql_error& e) {
        throw_api_error(e);
    }
}

std::vector<PositionedEvent> PostgresLogReader::read_lanes(const std::string& pattern, ReadPosition& position,
                                                           int max) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            std::vector<PositionedEvent> out;
            ReadPosition moved = position;
            for (const auto& row : tx.exec_params(statements::log_reader::read_log_lanes, pattern,
                                                  lane_tx_array(position), lane_seq_array(position), max)) {
                const auto lane = row[0].as<int>();
                moved.lanes.at(static_cast<std::size_t>(lane)) =
                    LogPosition{row[1].as<std::string>(), row[2].as<std::int64_t>()};
                if (!row[3].is_null()) out.push_back(event_of(row, 1, lane));
            }
            position = moved;  // only once the whole answer is in (a retried run starts over)
            return out;
        });
    } catch (const pqxx::sql_error& e) {
        throw_api_error(e);
    }
}

}  // namespace tributary::postgres
