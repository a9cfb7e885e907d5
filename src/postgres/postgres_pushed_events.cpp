#include "postgres_pushed_events.h"

#include <string>

#include <spdlog/spdlog.h>

#include "core/errors.h"
#include "postgres/statements.h"
#include "sql_errors.h"
#include "text_array.h"

namespace tributary::postgres {

namespace {

constexpr const char* kStore = "tributary_receiver_store";

namespace sql = statements::pushed_events;

/// Tries of a group commit that lost a deadlock or serialization race to
/// another receiver storing the same keys.
constexpr int kAttempts = 3;

/// The arguments of receiver_store, one element per event: its request
/// (numbered from 1), its source, its key, and the payloads as one JSON
/// array of the texts as received (valid JSON already, as the loader sends
/// its batches).
struct StoreArguments {
    std::string requests = "{";
    std::string sources = "{";
    std::string keys = "{";
    std::string payloads = "[";
};

StoreArguments store_arguments(const std::vector<const webhook::PushedBatch*>& requests) {
    StoreArguments a;
    std::size_t payload_bytes = 2;
    for (const auto* request : requests)
        for (const auto& event : request->events) payload_bytes += event.payload.size() + 1;
    a.payloads.reserve(payload_bytes);
    bool first = true;
    for (std::size_t r = 0; r < requests.size(); ++r) {
        const auto number = std::to_string(r + 1);
        const auto source = std::to_string(requests[r]->source_id);
        for (const auto& event : requests[r]->events) {
            if (!first) {
                a.requests += ',';
                a.sources += ',';
                a.keys += ',';
                a.payloads += ',';
            }
            first = false;
            a.requests += number;
            a.sources += source;
            append_text_array_element(a.keys, event.key);
            a.payloads += event.payload;
        }
    }
    a.requests += '}';
    a.sources += '}';
    a.keys += '}';
    a.payloads += ']';
    return a;
}

}  // namespace

PostgresPushedEvents::PostgresPushedEvents(PostgresSession& session, const StopSignal* stop)
    : session_(session), stop_(stop) {
    session_.prepare(kStore, sql::store);
}

std::vector<std::optional<std::size_t>> PostgresPushedEvents::store(
    const std::vector<const webhook::PushedBatch*>& requests) {
    std::lock_guard<std::mutex> guard(mutex_);
    for (int attempt = 1;; ++attempt) {
        try {
            return store_once(requests);
        } catch (const DatabaseUnavailable& e) {
            throw webhook::StoreUnavailable(e.what());
        } catch (const pqxx::sql_error& e) {
            if (!is_retryable(e)) throw std::runtime_error("PostgreSQL refused the events: " + server_message(e));
            if (attempt == kAttempts)
                throw webhook::StoreUnavailable("group commit kept losing to concurrent writers: " + server_message(e));
            if (stop_ != nullptr && stop_->stop_requested())
                throw webhook::StoreUnavailable("group commit lost, and the receiver is stopping: " +
                                                server_message(e));
            spdlog::debug("group commit lost a race ({}), trying again", e.sqlstate());
        }
    }
}

std::vector<std::optional<std::size_t>> PostgresPushedEvents::store_once(
    const std::vector<const webhook::PushedBatch*>& requests) {
    std::vector<std::optional<std::size_t>> stored(requests.size());
    // A request without events stores nothing and is no one's business but
    // its own: receiver_store numbers requests by their events.
    bool any_event = false;
    for (const auto* request : requests) any_event = any_event || !request->events.empty();
    if (!any_event) {
        for (auto& s : stored) s = 0;
        return stored;
    }
    const auto arguments = store_arguments(requests);
    const auto rows = session_.run([&](pqxx::connection& c) {
        if (synchronous_generation_ != session_.generation()) {
            pqxx::nontransaction setting(c);
            setting.exec(sql::synchronous_commit);
            synchronous_generation_ = session_.generation();
        }
        pqxx::work tx(c);
        auto result =
            tx.exec_prepared(kStore, arguments.requests, arguments.sources, arguments.keys, arguments.payloads);
        tx.commit();
        return result;
    });
    std::vector<bool> answered(requests.size(), false);
    for (const auto& row : rows) {
        const auto request = row[0].as<std::size_t>();
        if (request < 1 || request > requests.size()) continue;
        answered[request - 1] = true;
        if (!row[1].is_null()) stored[request - 1] = row[1].as<std::size_t>();
    }
    // Requests without events have no row: nothing stored, their source
    // asked about by no one. Their sources' state is the committer's to know.
    for (std::size_t r = 0; r < requests.size(); ++r)
        if (!answered[r] && requests[r]->events.empty()) stored[r] = 0;
    return stored;
}

}  // namespace tributary::postgres
