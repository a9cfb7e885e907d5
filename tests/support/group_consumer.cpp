#include "support/group_consumer.h"

#include <catch2/catch.hpp>

#include <thread>

#include <nlohmann/json.hpp>

namespace tributary::testing {

namespace {

std::string array_literal(const std::vector<std::int64_t>& values) {
    std::string text = "{";
    for (std::size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
    return text + "}";
}

/// Each element's payload exactly as the events text holds it. A JSON library
/// would hand back a re-serialised value; the json type's -> keeps the bytes.
std::vector<std::string> payload_texts(pqxx::connection& connection, const std::string& events) {
    pqxx::nontransaction tx(connection);
    std::vector<std::string> out;
    for (const auto& row : tx.exec_params(
             "SELECT (e.value -> 'payload')::text FROM json_array_elements($1::json) WITH ORDINALITY e ORDER BY "
             "e.ordinality",
             events))
        out.push_back(row[0].as<std::string>());
    return out;
}

/// Throws when `holds` is false. Not Catch's REQUIRE: consumers run on
/// threads of their own in some tests, and Catch's assertions are for the
/// test's thread only (from another, they can abort the whole run).
void require(bool holds, const std::string& what) {
    if (!holds) throw std::runtime_error(what);
}

/// The batch the events array describes; throws when an element lacks a field.
Batch batch_of(const pqxx::row& row, const std::string& events, std::vector<std::string> payloads) {
    Batch batch;
    if (!row[0].is_null()) {
        batch.id = row[0].as<std::int64_t>();
        batch.token = row[1].as<std::string>();
        batch.delivery = row[2].as<int>();
    }
    for (const auto& element : nlohmann::json::parse(events)) {
        const bool complete = element.at("seq").is_number_integer() && element.at("source").is_string() &&
                              (element.at("event_id").is_null() || element.at("event_id").is_number_integer()) &&
                              element.at("event_key").is_string() && element.contains("payload") &&
                              element.at("delivery").is_number_integer();
        require(complete,
                "an element of consumer_next's events lacks a field or has the wrong type: " + element.dump());
        batch.seqs.push_back(element["seq"].get<std::int64_t>());
        batch.sources.push_back(element["source"].get<std::string>());
        batch.event_ids.push_back(element["event_id"].is_null()
                                      ? std::nullopt
                                      : std::optional<std::int64_t>(element["event_id"].get<std::int64_t>()));
        batch.event_keys.push_back(element["event_key"].get<std::string>());
        batch.deliveries.push_back(element["delivery"].get<int>());
    }
    batch.payloads = std::move(payloads);
    return batch;
}

}  // namespace

std::vector<std::optional<std::int64_t>> ids(std::initializer_list<std::int64_t> values) {
    return {values.begin(), values.end()};
}

Consumer::Consumer(const std::string& url, std::string group, std::string name)
    : connection_(url), group_(std::move(group)), name_(std::move(name)) {}

Batch Consumer::read(int max) {
    pqxx::nontransaction tx(connection_);
    const auto rows = tx.exec_params(
        "SELECT batch_id, lease_token, delivery, seq, source, event_id, payload::text, event_key "
        "FROM tributary.consumer_read($1, $2, $3)",
        group_, name_, max);
    Batch batch;
    for (const auto& row : rows) {
        batch.id = row[0].as<std::int64_t>();
        batch.token = row[1].as<std::string>();
        batch.delivery = row[2].as<int>();
        batch.seqs.push_back(row[3].as<std::int64_t>());
        batch.sources.push_back(row[4].as<std::string>());
        batch.event_ids.push_back(row[5].is_null() ? std::nullopt
                                                   : std::optional<std::int64_t>(row[5].as<std::int64_t>()));
        batch.payloads.push_back(row[6].as<std::string>());
        batch.event_keys.push_back(row[7].as<std::string>());
        batch.deliveries.push_back(batch.delivery);
    }
    return batch;
}

Batch Consumer::read_soon(int max, std::chrono::milliseconds patience) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    for (;;) {
        auto batch = read(max);
        if (!batch.empty() || std::chrono::steady_clock::now() > deadline) return batch;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

Next Consumer::next(int max, const Batch* previous) {
    std::optional<std::int64_t> previous_id;
    std::optional<std::string> previous_token;
    if (previous) {
        require(!previous->token.empty(), "an empty batch names no previous batch");
        previous_id = previous->id;
        previous_token = previous->token;
    }
    pqxx::result rows;
    {
        pqxx::nontransaction tx(connection_);
        rows = tx.exec_params(
            "SELECT batch_id, lease_token, delivery, events::text, previous_acked, lane "
            "FROM tributary.consumer_next($1, $2, $3, $4, $5::uuid)",
            group_, name_, max, previous_id, previous_token);
    }
    require(rows.size() == 1, "consumer_next returned " + std::to_string(rows.size()) + " rows, not one");
    const auto& row = rows[0];
    Next next;
    next.batch_id_null = row[0].is_null();
    next.events = row[3].as<std::string>();
    if (!row[4].is_null()) next.previous_acked = row[4].as<bool>();
    if (!row[5].is_null()) next.lane = row[5].as<int>();
    next.batch = batch_of(row, next.events, payload_texts(connection_, next.events));
    return next;
}

Next Consumer::next_soon(int max, const Batch* previous, std::chrono::milliseconds patience) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    auto first = next(max, previous);
    if (!first.batch.empty()) return first;
    for (;;) {
        auto later = next(max);
        later.previous_acked = first.previous_acked;  // what the call that named `previous` said
        if (!later.batch.empty() || std::chrono::steady_clock::now() > deadline) return later;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

bool Consumer::ack(const Batch& batch, const std::vector<std::int64_t>& failed, const std::string& error) {
    pqxx::nontransaction tx(connection_);
    return tx
        .exec_params("SELECT tributary.consumer_ack($1, $2::uuid, $3::bigint[], $4)", batch.id, batch.token,
                     array_literal(failed), error)[0][0]
        .as<bool>();
}

bool Consumer::fail(const Batch& batch, const std::string& error) {
    pqxx::nontransaction tx(connection_);
    return tx.exec_params("SELECT tributary.consumer_fail($1, $2::uuid, $3)", batch.id, batch.token, error)[0][0]
        .as<bool>();
}

bool Consumer::extend(const Batch& batch, const std::string& lease) {
    pqxx::nontransaction tx(connection_);
    return tx
        .exec_params("SELECT tributary.consumer_extend($1, $2::uuid, $3::interval)", batch.id, batch.token, lease)[0][0]
        .as<bool>();
}

int add_source(const TestDatabase& db, const std::string& name) {
    return std::stoi(db.scalar("INSERT INTO tributary.sources (name, url) VALUES ('" + name +
                               "', 'http://127.0.0.1:9/" + name + "') RETURNING id"));
}

std::vector<std::int64_t> insert_events(pqxx::transaction_base& tx, int source_id, std::int64_t first_id, int count,
                                        const std::string& payload) {
    const auto rows = tx.exec_params(
        "INSERT INTO tributary.events (source_id, event_id, payload) "
        "SELECT $1, $2 + i, $4::jsonb FROM generate_series(0, $3 - 1) i RETURNING seq",
        source_id, first_id, count, payload);
    std::vector<std::int64_t> seqs;
    for (const auto& row : rows) seqs.push_back(row[0].as<std::int64_t>());
    std::sort(seqs.begin(), seqs.end());
    return seqs;
}

std::vector<std::int64_t> commit_events(const TestDatabase& db, int source_id, std::int64_t first_id, int count,
                                        const std::string& payload) {
    pqxx::connection connection(db.url());
    pqxx::work tx(connection);
    auto seqs = insert_events(tx, source_id, first_id, count, payload);
    tx.commit();
    return seqs;
}

std::multiset<std::string> drain(Consumer& consumer, std::chrono::milliseconds quiet) {
    std::multiset<std::string> seen;
    for (;;) {
        const auto batch = consumer.read_soon(1000, quiet);
        if (batch.empty()) return seen;
        for (std::size_t i = 0; i < batch.seqs.size(); ++i) seen.insert(batch.sources[i] + ":" + batch.event_keys[i]);
        REQUIRE(consumer.ack(batch));
    }
}

GroupStatus status_of(const TestDatabase& db, const std::string& group) {
    pqxx::connection connection(db.url());
    pqxx::nontransaction tx(connection);
    const auto rows = tx.exec_params(
        "SELECT events_behind, batches_in_flight, retries_waiting, dead_letters, "
        "extract(epoch FROM oldest_unprocessed_age)::float8 FROM tributary.group_status WHERE name = $1",
        group);
    REQUIRE(rows.size() == 1);
    GroupStatus s;
    s.events_behind = rows[0][0].as<std::int64_t>();
    s.batches_in_flight = rows[0][1].as<int>();
    s.retries_waiting = rows[0][2].as<int>();
    s.dead_letters = rows[0][3].as<int>();
    s.oldest_age_s = rows[0][4].is_null() ? -1 : rows[0][4].as<double>();
    return s;
}

}  // namespace tributary::testing
