// End to end: the tributary binary, the source server over HTTP, a real
// PostgreSQL. What the sources served is compared with what was stored.

#include <catch2/catch.hpp>

#include <thread>

#include <algorithm>
#include <csignal>
#include <map>

#include <pqxx/pqxx>

#include "support/source_server.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

std::string source_name(int i) { return "it.src-" + std::to_string(i); }

void add_sources(const TestDatabase& db, const SourceServer& server, int count) {
    for (int i = 0; i < count; ++i)
        run_tributary(db.url(), {"source", "add", source_name(i), "--url", server.events_url(source_name(i))});
}

/// Stored events of one source: event_id -> payload.
std::map<std::int64_t, nlohmann::json> stored_events(const TestDatabase& db, const std::string& source) {
    pqxx::connection c(db.url());
    pqxx::nontransaction tx(c);
    std::map<std::int64_t, nlohmann::json> events;
    const auto rows = tx.exec_params(
        "SELECT e.event_id, e.payload::text FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id"
        " WHERE s.name = $1 ORDER BY e.seq",
        source);
    for (const auto& row : rows)
        events.emplace(row[0].as<std::int64_t>(), nlohmann::json::parse(row[1].as<std::string>()));
    CHECK(events.size() == rows.size());  // no event id twice
    return events;
}

/// Every event the source served is stored once, with its payload.
void check_exactly_once(const TestDatabase& db, const SourceServer& server, const std::string& source) {
    const auto truth = server.truth(source);
    const auto stored = stored_events(db, source);
    REQUIRE(stored.size() == truth.size());
    for (const auto& event : truth) {
        const auto it = stored.find(event["id"].get<std::int64_t>());
        REQUIRE(it != stored.end());
        CHECK(it->second == event["payload"]);
    }
}

/// The smallest gap between two consecutive requests to a source, in ms.
double smallest_gap_ms(const SourceServer& server, const std::string& source) {
    std::vector<std::int64_t> arrivals;
    for (const auto& r : server.requests(source)) arrivals.push_back(r["arrival_us"].get<std::int64_t>());
    std::sort(arrivals.begin(), arrivals.end());
    double smallest = 1e12;
    for (std::size_t i = 1; i < arrivals.size(); ++i)
        smallest = std::min(smallest, (arrivals[i] - arrivals[i - 1]) / 1000.0);
    return smallest;
}

}  // namespace

TEST_CASE("two loader processes load 20 sources exactly once, one request per 200 ms per source") {
    TestDatabase db;
    SourceServer server({"--sources", "20", "--prefix", "it.src-", "--backlog", "2500", "--threads", "16"});
    add_sources(db, server, 20);

    ChildProcess first(tributary_args(db.url(), {"run", "--workers", "2", "--until-idle"}));
    ChildProcess second(tributary_args(db.url(), {"run", "--workers", "2", "--until-idle"}));
    REQUIRE(first.wait_for(3min) == 0);
    REQUIRE(second.wait_for(3min) == 0);
    INFO("first loader's log:\n" << first.err() << "\nsecond loader's log:\n" << second.err());

    for (int i = 0; i < 20; ++i) {
        check_exactly_once(db, server, source_name(i));
        CHECK(smallest_gap_ms(server, source_name(i)) >= 200.0);
    }
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "50000");
    const auto status = status_by_name(db.url());
    CHECK(status[source_name(7)]["cursor"] == 2500);
    CHECK(status[source_name(7)]["events_stored"] == 2500);
    CHECK(status[source_name(7)]["state"] == "ok");
}

TEST_CASE("loaders pick up events produced while they run, and stop gracefully on SIGTERM") {
    TestDatabase db;
    SourceServer server({"--sources", "3", "--prefix", "it.src-", "--backlog", "100", "--rate", "200"});
    add_sources(db, server, 3);

    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "2"}));
    std::this_thread::sleep_for(3s);
    loader.signal(SIGTERM);
    REQUIRE(loader.wait_for(15s) == 0);
    CHECK(loader.err().find("stopped") != std::string::npos);

    // Whatever was stored is a gap-free prefix of what was served.
    for (int i = 0; i < 3; ++i) {
        const auto stored = stored_events(db, source_name(i));
        CHECK(stored.size() > 100);
        CHECK(static_cast<std::int64_t>(stored.size()) == stored.rbegin()->first);
    }
    CHECK(db.scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'") == "0");
}

TEST_CASE("--max-runtime ends a run on time") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "it.src-", "--backlog", "10", "--rate", "10"});
    add_sources(db, server, 1);
    const auto start = std::chrono::steady_clock::now();
    const auto done = run_tributary(db.url(), {"run", "--max-runtime", "2s"});
    CHECK(std::chrono::steady_clock::now() - start >= 2s);  // never before
    CHECK_THAT(done.err, Catch::Contains("max runtime 2s reached, stopping"));
}

TEST_CASE("paused sources are not asked; resumed ones catch up") {
    TestDatabase db;
    SourceServer server({"--sources", "2", "--prefix", "it.src-", "--backlog", "50"});
    add_sources(db, server, 2);
    run_tributary(db.url(), {"source", "pause", source_name(1)});
    run_tributary(db.url(), {"run", "--until-idle"});
    CHECK(server.requests(source_name(1)).empty());
    CHECK(status_by_name(db.url())[source_name(1)]["state"] == "paused");
    run_tributary(db.url(), {"source", "resume", source_name(1)});
    run_tributary(db.url(), {"run", "--until-idle"});
    check_exactly_once(db, server, source_name(1));
}

TEST_CASE("--until-idle asks a source that waits out an idle pause instead of trusting its old empty answer") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "it.src-", "--backlog", "30"});
    add_sources(db, server, 1);
    // As if asked 2 s ago, empty five times in a row: idle for another day.
    // A loader that waited it out would stop at --max-runtime, having
    // stored nothing.
    db.exec(
        "UPDATE tributary.gates SET last_request = now() - interval '2 s', last_success_at = now() - interval "
        "'1.9 s', drained = true, empty_streak = 5, next_allowed_at = now() + interval '1 day'");
    run_tributary(db.url(), {"run", "--until-idle", "--max-runtime", "60s"});
    check_exactly_once(db, server, source_name(0));
}
