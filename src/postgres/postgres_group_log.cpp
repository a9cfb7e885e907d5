#include "postgres_group_log.h"

#include <string_view>

#include "batch_events_json.h"
#include "optional_field.h"
#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

constexpr const char* kRead = "tributary_consumer_read";
constexpr const char* kNext = "tributary_consumer_next";
constexpr const char* kAck = "tributary_consumer_ack";
constexpr const char* kFail = "tributary_consumer_fail";
constexpr const char* kExtend = "tributary_consumer_extend";
constexpr const char* kLeave = "tributary_consumer_leave";
constexpr const char* kAwaitsLanes = "tributary_consumer_awaits_lanes";

/// SQLSTATE the SQL API raises for an unknown group.
constexpr const char* kNoDataFound = "P0002";

LeasedBatch to_batch(const pqxx::result& rows) {
    LeasedBatch batch;
    batch.id = rows[0][0].as<std::int64_t>();
    batch.token = rows[0][1].as<std::string>();
    batch.delivery = rows[0][2].as<int>();
    batch.events.reserve(rows.size());
    for (const auto& row : rows)
        batch.events.push_back(LoggedEvent{row[3].as<std::int64_t>(), row[4].as<std::string>(),
                                           optional_field<std::int64_t>(row[5]), row[6].as<std::string>(),
                                           row[7].as<std::string>()});
    return batch;
}

/// consumer_next's one row: batch_id, lease_token, delivery, events, previous_acked.
NextBatch to_next(const pqxx::row& row) {
    NextBatch next;
    next.previous_acked = optional_field<bool>(row[4]);
    if (row[0].is_null()) return next;
    LeasedBatch batch;
    batch.id = row[0].as<std::int64_t>();
    batch.token = row[1].as<std::string>();
    batch.delivery = row[2].as<int>();
    batch.events = read_batch_events(std::string_view(row[3].c_str(), row[3].size()));
    next.batch = std::move(batch);
    return next;
}

/// A call's SQLSTATE P0002 as GroupNotFound.
template <typename Call>
auto naming_missing_group(Call&& call) -> decltype(call()) {
    try {
        return call();
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() == kNoDataFound) throw GroupNotFound(server_message(e));
        throw;
    }
}

}  // namespace

PostgresGroupLog::PostgresGroupLog(PostgresSession& session, std::string group)
    : session_(session), group_(std::move(group)) {
    session_.prepare(kRead, statements::group_log::read);
    session_.prepare(kNext, statements::group_log::next);
    session_.prepare(kAck, statements::group_log::ack);
    session_.prepare(kFail, statements::group_log::fail);
    session_.prepare(kExtend, statements::group_log::extend);
    session_.prepare(kLeave, statements::group_log::leave);
    session_.prepare(kAwaitsLanes, statements::group_log::awaits_lanes);
}

std::optional<LeasedBatch> PostgresGroupLog::read(const std::string& consumer, int max_events) {
    return naming_missing_group([&] {
        return session_.run([&](pqxx::connection& c) -> std::optional<LeasedBatch> {
            pqxx::nontransaction tx(c);
            const auto rows = session_.exec(tx, kRead, group_, consumer, max_events);
            if (rows.empty()) return std::nullopt;
            return to_batch(rows);
        });
    });
}

NextBatch PostgresGroupLog::next(const std::string& consumer, int max_events, const LeasedBatch* previous) {
    const std::string previous_id = previous ? std::to_string(previous->id) : std::string();
    const char* id = previous ? previous_id.c_str() : nullptr;  // NULL: no previous batch
    const char* token = previous ? previous->token.c_str() : nullptr;
    return naming_missing_group([&] {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            return to_next(session_.exec(tx, kNext, group_, consumer, max_events, id, token)[0]);
        });
    });
}

bool PostgresGroupLog::ack(const LeasedBatch& batch) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        return session_.exec(tx, kAck, batch.id, batch.token)[0][0].as<bool>();
    });
}

bool PostgresGroupLog::fail(const LeasedBatch& batch, const std::string& error) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        return session_.exec(tx, kFail, batch.id, batch.token, storable_text(error))[0][0].as<bool>();
    });
}

bool PostgresGroupLog::extend(std::int64_t batch_id, const std::string& token) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        return session_.exec(tx, kExtend, batch_id, token)[0][0].as<bool>();
    });
}

int PostgresGroupLog::leave(const std::string& consumer) {
    return naming_missing_group([&] {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            return session_.exec(tx, kLeave, group_, consumer)[0][0].as<int>();
        });
    });
}

bool PostgresGroupLog::awaits_lanes(const std::string& consumer) {
    return naming_missing_group([&] {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            return session_.exec(tx, kAwaitsLanes, group_, consumer)[0][0].as<bool>();
        });
    });
}

std::string storable_text(const std::string& text, std::size_t longest) {
    const std::size_t start = text.size() > longest ? text.size() - longest : 0;
    std::string out = start ? "..." : "";
    for (std::size_t i = start; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const bool keep = (byte >= 0x20 && byte < 0x7f) || byte == '\n' || byte == '\t';
        out += keep ? text[i] : '?';
    }
    return out;
}

}  // namespace tributary::postgres

namespace tributary::postgres {

namespace {

class SessionGroupLog : public GroupLog {
public:
    SessionGroupLog(const std::string& conninfo, const std::string& group, SessionKeeping keeping)
        : session_(conninfo, keeping), log_(session_, group) {
        session_.log_server_warnings("group=" + group);
    }
    std::optional<LeasedBatch> read(const std::string& consumer, int max_events) override {
        return log_.read(consumer, max_events);
    }
    NextBatch next(const std::string& consumer, int max_events, const LeasedBatch* previous) override {
        return log_.next(consumer, max_events, previous);
    }
    bool ack(const LeasedBatch& batch) override { return log_.ack(batch); }
    bool fail(const LeasedBatch& batch, const std::string& error) override { return log_.fail(batch, error); }
    bool extend(std::int64_t batch_id, const std::string& token) override { return log_.extend(batch_id, token); }
    int leave(const std::string& consumer) override { return log_.leave(consumer); }
    bool awaits_lanes(const std::string& consumer) override { return log_.awaits_lanes(consumer); }

private:
    PostgresSession session_;
    PostgresGroupLog log_;
};

}  // namespace

std::unique_ptr<GroupLog> open_group_log(const std::string& conninfo, const std::string& group,
                                         SessionKeeping keeping) {
    return std::make_unique<SessionGroupLog>(conninfo, group, keeping);
}

}  // namespace tributary::postgres
