#include "postgres_tail_feed.h"

#include <stdexcept>

#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

constexpr const char* kReadEvents = "tributary_console_tail_read";
constexpr const char* kReadLaneEvents = "tributary_console_tail_read_lanes";

/// The SQL API's refusals (a bad pattern or `from`) are the client's error.
template <class F>
auto refusals_as_invalid_argument(F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const InvalidRequest& e) {
        throw std::invalid_argument(e.what());
    }
}

}  // namespace

PostgresTailFeed::PostgresTailFeed(const std::string& database_url) : session_(database_url), reader_(session_) {
    session_.prepare(kReadEvents, statements::console_tail::read_events);
    session_.prepare(kReadLaneEvents, statements::console_tail::read_lane_events);
}

std::string PostgresTailFeed::position(const std::string& from) {
    return refusals_as_invalid_argument([&] { return position_text(reader_.position(from)); });
}

std::string PostgresTailFeed::after_event(const std::string& last_event_id) {
    return position_text(parse_position_text(last_event_id));
}

std::vector<console::TailEvent> PostgresTailFeed::read(const std::string& pattern, const std::string& after, int max) {
    if (parse_position_text(after).by_lane()) return read_lanes(pattern, after, max);
    return read_one_order(pattern, after, max);
}

std::vector<console::TailEvent> PostgresTailFeed::read_one_order(const std::string& pattern, const std::string& after,
                                                                 int max) {
    const auto position = parse_position_text(after).log;
    return refusals_as_invalid_argument([&] {
        try {
            return session_.run([&](pqxx::connection& c) {
                pqxx::nontransaction tx(c);
                std::vector<console::TailEvent> out;
                for (const auto& row : tx.exec_prepared(kReadEvents, pattern, position.tx_id, position.seq, max))
                    out.push_back(console::TailEvent{row[0].as<std::string>(), row[1].as<std::string>()});
                return out;
            });
        } catch (const pqxx::sql_error& e) {
            throw_api_error(e);
        }
    });
}

std::vector<console::TailEvent> PostgresTailFeed::read_lanes(const std::string& pattern, const std::string& after,
                                                             int max) {
    const auto start = moved_ && after == last_id_ ? *moved_ : parse_position_text(after);
    return refusals_as_invalid_argument([&] {
        try {
            return session_.run([&](pqxx::connection& c) {
                pqxx::nontransaction tx(c);
                std::vector<console::TailEvent> out;
                auto at = start;
                // Each event's id is the position just after it: a client that
                // comes back with it gets what follows, lane by lane.
                for (const auto& row :
                     tx.exec_prepared(kReadLaneEvents, pattern, lane_tx_array(start), lane_seq_array(start), max)) {
                    at.lanes.at(row[0].as<std::size_t>()) =
                        LogPosition{row[1].as<std::string>(), row[2].as<std::int64_t>()};
                    if (!row[3].is_null())
                        out.push_back(console::TailEvent{position_text(at), row[3].as<std::string>()});
                }
                last_id_ = out.empty() ? after : out.back().id;
                moved_ = at;
                return out;
            });
        } catch (const pqxx::sql_error& e) {
            throw_api_error(e);
        }
    });
}

std::unique_ptr<console::TailFeed> PostgresTailFeeds::open() {
    return std::make_unique<PostgresTailFeed>(database_url_);
}

}  // namespace tributary::postgres
