#include "postgres_tail_feed.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

constexpr const char* kReadEvents = "tributary_console_tail_read";

bool all_digits(const std::string& text) {
    return !text.empty() && text.size() <= 19 &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string event_id(const LogPosition& position) { return position.tx_id + ":" + std::to_string(position.seq); }

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

LogPosition parse_event_id(const std::string& id) {
    const auto colon = id.find(':');
    if (colon == std::string::npos || !all_digits(id.substr(0, colon)) || !all_digits(id.substr(colon + 1)))
        throw std::invalid_argument("Last-Event-ID must be an event id <tx>:<seq>");
    return LogPosition{id.substr(0, colon), std::stoll(id.substr(colon + 1))};
}

PostgresTailFeed::PostgresTailFeed(const std::string& database_url) : session_(database_url), reader_(session_) {
    session_.prepare(kReadEvents, statements::console_tail::read_events);
}

std::string PostgresTailFeed::position(const std::string& from) {
    return refusals_as_invalid_argument([&] { return event_id(reader_.position(from)); });
}

std::string PostgresTailFeed::after_event(const std::string& last_event_id) {
    return event_id(parse_event_id(last_event_id));
}

std::vector<console::TailEvent> PostgresTailFeed::read(const std::string& pattern, const std::string& after, int max) {
    const auto position = parse_event_id(after);
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

std::unique_ptr<console::TailFeed> PostgresTailFeeds::open() {
    return std::make_unique<PostgresTailFeed>(database_url_);
}

}  // namespace tributary::postgres
