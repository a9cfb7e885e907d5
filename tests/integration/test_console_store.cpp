// The console's database side (issue 17): the documents of the console_*
// functions through PostgresConsoleStore, run as a member of
// tributary_console; what that role may not read; the fold of the
// per-minute counts (exactly once, however it races); the error episodes
// loader_close_failed records; the actions.

#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "postgres/postgres_console_store.h"
#include "support/login_role.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary;
using namespace tributary::testing;
using nlohmann::json;

namespace {

const std::string kHostile = "<img src=x onerror=alert(1)>";

/// Three kinds of sources (one pulled with a password in its URL, a key in its query and a
/// secret header), events for each, a failing pulled source with a hostile error text, a group
/// with a dead letter, and the per-minute counts folded.
void seed(const TestDatabase& db) {
    db.exec(
        "INSERT INTO tributary.sources (name, kind, url, headers) VALUES"
        " ('orders.eu', 'http', 'https://reader:hunter2@eu.example/api/events?api_key=SECRETKEY#frag',"
        "  '{\"Authorization: Bearer SECRETTOKEN\", \"X-Api-Key: SECRETHEADER\"}'),"
        " ('orders.us', 'http', 'https://us.example/api/events', '{}')");
    db.exec(
        "INSERT INTO tributary.sources (name, kind, receiving) VALUES ('hooks.gh', 'push', '{\"secret_env\": "
        "\"GH_SECRET\"}')");
    db.exec("INSERT INTO tributary.sources (name, kind, publishers) VALUES ('app.audit', 'published', '{app}')");
    db.exec(
        "INSERT INTO tributary.cursors (source_id, last_event_id) SELECT id, 0 FROM tributary.sources WHERE kind = "
        "'http'");
    db.exec("INSERT INTO tributary.gates (source_id) SELECT id FROM tributary.sources WHERE kind = 'http'");
    db.exec(
        "INSERT INTO tributary.events (source_id, event_id, payload)"
        " SELECT s.id, i, jsonb_build_object('n', i) FROM tributary.sources s, generate_series(1, 25) i"
        " WHERE s.name = 'orders.eu'");
    db.exec(
        "INSERT INTO tributary.events (source_id, event_key, payload)"
        " SELECT s.id, 'k' || i, jsonb_build_object('hook', i) FROM tributary.sources s, generate_series(1, 3) i"
        " WHERE s.name = 'hooks.gh'");
    db.exec("UPDATE tributary.cursors SET last_event_id = 25, events_stored = 25 WHERE source_id = 1");
    // Two failed closes of orders.us with the hostile text: one episode, counted twice.
    for (int lease = 1; lease <= 2; ++lease) {
        db.exec("UPDATE tributary.gates SET lease = " + std::to_string(lease) + " WHERE source_id = 2");
        db.exec("SELECT tributary.loader_close_failed(2, NULL, " + std::to_string(lease) + ", 60000, 'failing', '" +
                kHostile + "')");
    }
    db.exec("SELECT tributary.group_create('billing', 'orders.>', 'beginning')");
    db.exec(
        "INSERT INTO tributary.consumer_dead_letters (group_id, seq, deliveries, last_error, tx_from, tx_to)"
        " SELECT g.id, e.seq, 5, 'consumer said no', e.tx_id, e.tx_id FROM tributary.consumer_groups g,"
        " tributary.events e WHERE g.name = 'billing' AND e.event_id = 3");
    db.exec("SELECT tributary.activity_fold(100000)");
}

/// A login member of tributary_console, made through `tributary grant console`.
struct ConsoleUser {
    explicit ConsoleUser(const TestDatabase& db) : role(db, "console") {
        run_tributary(db.url(), {"grant", "console", role.name()});
        url = as_user(db.url(), role.name());
    }
    LoginRole role;
    std::string url;
};

long long sum(const json& numbers) {
    long long total = 0;
    for (const auto& n : numbers) total += n.get<long long>();
    return total;
}

}  // namespace

TEST_CASE("the console's documents on a seeded database, with no secret in any of them", "[console_store]") {
    TestDatabase db;
    seed(db);
    ConsoleUser user(db);
    postgres::PostgresConsoleStore store(user.url);

    std::vector<std::string> documents;
    const auto overview = json::parse(documents.emplace_back(store.overview()));
    CHECK(overview["sources"]["total"] == 4);
    CHECK(overview["sources"]["by_state"]["failing"] == 1);
    CHECK(overview["sources"]["by_state"]["ok"] == 1);
    CHECK(overview["sources"]["by_state"]["pushed"] == 1);
    CHECK(overview["sources"]["by_state"]["published"] == 1);
    CHECK(overview["rate"]["step_seconds"] == 60);
    REQUIRE(overview["rate"]["events"].size() == 60);
    CHECK(sum(overview["rate"]["events"]) == 28);
    CHECK(overview["groups"]["total"] == 1);
    CHECK(overview["groups"]["behind"][0]["name"] == "billing");
    CHECK(overview["log"]["activity_through"].is_string());
    bool failing_listed = false, dead_listed = false;
    for (const auto& item : overview["attention"]) {
        if (item["kind"] == "failing_source" && item["subject"] == "orders.us" && item["detail"] == kHostile)
            failing_listed = true;
        if (item["kind"] == "dead_letters" && item["subject"] == "billing") dead_listed = true;
    }
    CHECK(failing_listed);
    CHECK(dead_listed);

    const auto all = json::parse(documents.emplace_back(store.sources({})));
    CHECK(all["total"] == 4);
    CHECK(all["matched"] == 4);
    REQUIRE(all["sources"].size() == 4);
    CHECK(all["sources"][0]["name"] == "app.audit");  // by name
    CHECK(all["sources"][0]["kind"] == "published");
    CHECK(all["sources"][0]["cursor"].is_null());

    console::SourceQuery failing;
    failing.pattern = "orders.*";
    failing.state = "failing";
    failing.sort = "errors";
    failing.descending = true;
    const auto only_failing = json::parse(documents.emplace_back(store.sources(failing)));
    CHECK(only_failing["matched"] == 1);
    CHECK(only_failing["sources"][0]["name"] == "orders.us");
    CHECK(only_failing["sources"][0]["failures"] == 2);
    CHECK(only_failing["sources"][0]["last_error"] == kHostile);

    console::SourceQuery page;
    page.sort = "name";
    page.descending = true;
    page.limit = 2;
    page.offset = 1;
    const auto second_page = json::parse(documents.emplace_back(store.sources(page)));
    REQUIRE(second_page["sources"].size() == 2);
    CHECK(second_page["sources"][0]["name"] == "orders.eu");
    CHECK(second_page["sources"][1]["name"] == "hooks.gh");

    const auto eu = json::parse(documents.emplace_back(store.source("orders.eu")));
    CHECK(eu["kind"] == "http");
    CHECK(eu["state"] == "ok");
    CHECK(eu["config"]["url"] == "https://eu.example/api/events");
    CHECK(eu["config"]["headers"] == json::array({"Authorization: <redacted>", "X-Api-Key: <redacted>"}));
    CHECK(eu["cursor"] == 25);
    CHECK(sum(eu["per_minute"]["events"]) == 25);
    REQUIRE(eu["last_events"].size() == 20);
    CHECK(eu["last_events"][0]["event_id"] == 25);
    CHECK(eu["last_events"][0]["payload"]["n"] == 25);
    CHECK(eu["failing_since"].is_null());

    const auto us = json::parse(documents.emplace_back(store.source("orders.us")));
    CHECK(us["state"] == "failing");
    REQUIRE(us["errors"].size() == 1);
    CHECK(us["errors"][0]["count"] == 2);
    CHECK(us["errors"][0]["error"] == kHostile);
    CHECK(us["failing_since"] == us["errors"][0]["first_at"]);

    const auto hooks = json::parse(documents.emplace_back(store.source("hooks.gh")));
    CHECK(hooks["state"] == "pushed");
    CHECK(hooks["config"]["receiving"]["secret_env"] == "GH_SECRET");
    REQUIRE(hooks["last_events"].size() == 3);
    CHECK(hooks["last_events"][0]["event_key"] == "k3");
    CHECK(hooks["last_events"][0]["event_id"].is_null());

    const auto groups = json::parse(documents.emplace_back(store.groups()));
    REQUIRE(groups["groups"].size() == 1);
    CHECK(groups["groups"][0]["name"] == "billing");
    CHECK(groups["groups"][0]["events_behind"] == 25);
    CHECK(groups["groups"][0]["dead_letters"] == 1);

    const auto billing = json::parse(documents.emplace_back(store.group("billing", {})));
    CHECK(billing["pattern"] == "orders.>");
    CHECK(billing["dead_letter_page"]["total"] == 1);
    REQUIRE(billing["dead_letter_page"]["items"].size() == 1);
    CHECK(billing["dead_letter_page"]["items"][0]["source"] == "orders.eu");
    CHECK(billing["dead_letter_page"]["items"][0]["event_id"] == 3);
    CHECK(billing["dead_letter_page"]["items"][0]["error"] == "consumer said no");
    CHECK(billing["dead_letter_page"]["items"][0]["payload"]["n"] == 3);

    for (const auto& document : documents)
        for (const char* secret : {"hunter2", "reader:", "SECRETKEY", "api_key", "frag", "SECRETTOKEN", "SECRETHEADER"})
            CHECK(document.find(secret) == std::string::npos);
}

TEST_CASE("the console refuses bad arguments and unknown names as the port says", "[console_store]") {
    TestDatabase db;
    seed(db);
    ConsoleUser user(db);
    postgres::PostgresConsoleStore store(user.url, 2);

    console::SourceQuery bad;
    bad.pattern = "orders*";
    CHECK_THROWS_AS(store.sources(bad), std::invalid_argument);
    bad = {};
    bad.sort = "size";
    CHECK_THROWS_AS(store.sources(bad), std::invalid_argument);
    bad = {};
    bad.state = "sleeping";
    CHECK_THROWS_AS(store.sources(bad), std::invalid_argument);
    bad = {};
    bad.limit = 501;
    CHECK_THROWS_AS(store.sources(bad), std::invalid_argument);
    CHECK_THROWS_AS(store.group("billing", {0, 0}), std::invalid_argument);
    CHECK_THROWS_AS(store.source("nope"), console::NotFound);
    CHECK_THROWS_AS(store.group("nope", {}), console::NotFound);
    CHECK_THROWS_AS(store.pause("nope"), console::NotFound);
    CHECK_THROWS_AS(store.nudge("nope"), console::NotFound);
    CHECK_THROWS_AS(store.replay("nope", std::nullopt), console::NotFound);
    CHECK_THROWS_AS(store.reset("billing", "yesterday-ish"), std::invalid_argument);
}

TEST_CASE("the console's role reads nothing but its functions' documents", "[console_store]") {
    TestDatabase db;
    seed(db);
    ConsoleUser user(db);
    CHECK(denied(user.url, "SELECT headers FROM tributary.sources"));
    CHECK(denied(user.url, "SELECT name FROM tributary.sources"));
    CHECK(denied(user.url, "SELECT * FROM tributary.events"));
    CHECK(denied(user.url, "SELECT * FROM tributary.source_errors"));
    CHECK(denied(user.url, "SELECT * FROM tributary.access_tokens"));
    CHECK(denied(user.url, "SELECT * FROM tributary.group_status"));
    CHECK(denied(user.url, "SELECT tributary.activity_fold(10)"));
    CHECK(denied(user.url, "SELECT tributary.dead_letter_replay('billing', NULL)"));
    CHECK(denied(user.url, "SELECT tributary.console_shown_url('x')"));
    pqxx::connection c(user.url);
    pqxx::nontransaction tx(c);
    CHECK(tx.exec1("SELECT count(*) FROM tributary.schema_migrations")[0].as<int>() > 0);
    CHECK(tx.exec1("SELECT tributary.console_overview() ->> 'now'")[0].is_null() == false);
}

TEST_CASE("the console's actions pause, resume, nudge, replay and reset", "[console_store]") {
    TestDatabase db;
    seed(db);
    ConsoleUser user(db);
    postgres::PostgresConsoleStore store(user.url);

    CHECK(json::parse(store.pause("orders.eu")) == json({{"ok", true}, {"source", "orders.eu"}, {"enabled", false}}));
    CHECK(db.scalar("SELECT enabled FROM tributary.sources WHERE name = 'orders.eu'") == "f");
    CHECK(json::parse(store.source("orders.eu"))["state"] == "paused");
    CHECK(json::parse(store.resume("orders.eu"))["enabled"] == true);
    CHECK(db.scalar("SELECT enabled FROM tributary.sources WHERE name = 'orders.eu'") == "t");

    db.exec(
        "UPDATE tributary.gates SET next_allowed_at = now() + interval '1 hour', last_request = now() - interval '1 "
        "minute',"
        " last_success_at = now() - interval '1 minute' WHERE source_id = 1");
    CHECK(json::parse(store.nudge("orders.eu")) == json({{"ok", true}, {"source", "orders.eu"}, {"nudged", true}}));
    CHECK(db.scalar(
              "SELECT next_allowed_at <= now() AND nudged_at IS NOT NULL FROM tributary.gates WHERE source_id = 1") ==
          "t");
    CHECK(json::parse(store.nudge("hooks.gh"))["nudged"] == false);

    const auto seq = db.scalar("SELECT seq FROM tributary.consumer_dead_letters");
    CHECK(json::parse(store.replay("billing", std::stoll(seq))) == json({{"ok", true}, {"replayed", 1}}));
    CHECK(db.scalar("SELECT count(*) FROM tributary.consumer_dead_letters") == "0");
    CHECK(db.scalar("SELECT seq || ':' || deliveries FROM tributary.consumer_retries") == seq + ":0");
    CHECK(json::parse(store.replay("billing", std::nullopt))["replayed"] == 0);

    CHECK(json::parse(store.reset("billing", "end")) == json({{"ok", true}}));
    CHECK(json::parse(store.group("billing", {}))["events_behind"] == 0);
    CHECK(json::parse(store.reset("billing", "2000-01-01T00:00:00Z")) == json({{"ok", true}}));
    CHECK(json::parse(store.group("billing", {}))["events_behind"] == 25);
}

TEST_CASE("a group's events behind are counted up to a cap, then said to be at least that", "[console_store]") {
    TestDatabase db;
    seed(db);
    // orders.eu: 1 225 events (25 + 1 200), orders.us: 10 500, hooks.gh: 3; 70 more sources without
    // events, so that '*.>' matches more than the 64 sources counted one by one.
    db.exec(
        "INSERT INTO tributary.events (source_id, event_id, payload)"
        " SELECT 1, i, jsonb_build_object('n', i) FROM generate_series(26, 1225) i");
    db.exec(
        "INSERT INTO tributary.events (source_id, event_id, payload)"
        " SELECT 2, i, jsonb_build_object('n', i) FROM generate_series(1, 10500) i");
    db.exec(
        "INSERT INTO tributary.sources (name, kind, publishers)"
        " SELECT 'bulk.s' || i, 'published', '{app}' FROM generate_series(1, 70) i");
    db.exec("SELECT tributary.group_create('all', '>', 'beginning')");          // the log's index, in order
    db.exec("SELECT tributary.group_create('wide', '*.>', 'beginning')");       // the same, its sources' bits
    db.exec("SELECT tributary.group_create('eu', 'orders.eu', 'beginning')");   // one source, by its name
    db.exec("SELECT tributary.group_create('hooks', 'hooks.*', 'beginning')");  // few sources, one by one
    db.exec("SELECT tributary.group_create('caught-up', '>', 'end')");
    ConsoleUser user(db);
    postgres::PostgresConsoleStore store(user.url);

    // The lists: at most 1 000 counted.
    std::map<std::string, json> listed;
    const auto groups = json::parse(store.groups());
    for (const auto& g : groups["groups"]) listed[g["name"].get<std::string>()] = g;
    for (const auto* name : {"all", "wide", "eu", "billing"}) {
        INFO(name);
        CHECK(listed[name]["events_behind"] == 1000);
        CHECK(listed[name]["events_behind_capped"] == true);
        CHECK(listed[name]["oldest_unprocessed_age"].is_number());
    }
    CHECK(listed["hooks"]["events_behind"] == 3);
    CHECK(listed["hooks"]["events_behind_capped"] == false);
    CHECK(listed["caught-up"]["events_behind"] == 0);
    CHECK(listed["caught-up"]["events_behind_capped"] == false);
    CHECK(listed["caught-up"]["oldest_unprocessed_age"].is_null());
    const auto overview = json::parse(store.overview());
    REQUIRE(overview["groups"]["behind"].size() == 5);
    for (const auto& g : overview["groups"]["behind"]) {
        INFO(g.dump());
        CHECK(g["events_behind_capped"] == (g["name"] != "hooks"));
    }

    // A group's own page: exact up to 10 000.
    const auto eu = json::parse(store.group("eu", {}));
    CHECK(eu["events_behind"] == 1225);
    CHECK(eu["events_behind_capped"] == false);
    const auto billing = json::parse(store.group("billing", {}));
    CHECK(billing["events_behind"] == 10000);  // 11 725 of orders.*
    CHECK(billing["events_behind_capped"] == true);
    const auto all = json::parse(store.group("all", {}));
    CHECK(all["events_behind"] == 10000);
    CHECK(all["events_behind_capped"] == true);
    // The oldest unprocessed event is the log's first (orders.eu's, from seed) however far the count went.
    CHECK(all["oldest_unprocessed_age"].get<double>() >= eu["oldest_unprocessed_age"].get<double>() - 1.0);

    // Read to the end, a group is exact again.
    db.exec("SELECT tributary.group_reset('all', 'end')");
    CHECK(json::parse(store.group("all", {}))["events_behind"] == 0);
}

TEST_CASE("the console keeps the groups' matches a change to the sources cleared, once, skipping a read's",
          "[console_store]") {
    TestDatabase db;
    seed(db);  // billing: 'orders.>'
    db.exec("SELECT tributary.group_create('wide', '*.>', 'beginning')");
    db.exec("SELECT tributary.group_create('eu', 'orders.eu', 'beginning')");  // by its name: nothing to keep
    db.exec("SELECT tributary.group_create('all', '>', 'beginning')");         // every source: nothing to keep
    ConsoleUser user(db);
    postgres::PostgresConsoleStore store(user.url);
    const auto kept = [&db] {
        return db.scalar(
            "SELECT coalesce(string_agg(name, ',' ORDER BY name), '') FROM tributary.consumer_groups"
            " WHERE source_bits IS NOT NULL");
    };
    const auto kept_right = [&db] {
        return db.scalar(
            "SELECT bool_and(source_bits = tributary.matching_source_bits(pattern)) FROM tributary.consumer_groups"
            " WHERE source_bits IS NOT NULL");
    };
    REQUIRE(kept().empty());  // no group has read yet

    // A group's page keeps that group's; the lists every wildcard group's.
    const auto wide_behind = json::parse(store.group("wide", {}))["events_behind"];
    CHECK(kept() == "wide");
    CHECK(json::parse(store.group("wide", {}))["events_behind"] == wide_behind);
    CHECK_NOTHROW(json::parse(store.overview()));
    CHECK(kept() == "billing,wide");
    CHECK(kept_right() == "t");

    // A source added clears them (the trigger); the next page keeps them again, with it.
    db.exec("INSERT INTO tributary.sources (name, kind, publishers) VALUES ('orders.ap', 'published', '{app}')");
    CHECK(kept().empty());
    CHECK_NOTHROW(json::parse(store.groups()));
    CHECK(kept() == "billing,wide");
    CHECK(kept_right() == "t");
    CHECK(db.scalar("SELECT get_bit(source_bits, (SELECT id FROM tributary.sources WHERE name = 'orders.ap'))"
                    " FROM tributary.consumer_groups WHERE name = 'billing'") == "1");

    // A group whose row a read holds locked is skipped (the read keeps them), without waiting.
    db.exec("INSERT INTO tributary.sources (name, kind, publishers) VALUES ('orders.sa', 'published', '{app}')");
    pqxx::connection reader(db.url());
    pqxx::work read(reader);
    read.exec("SELECT 1 FROM tributary.consumer_groups WHERE name = 'wide' FOR NO KEY UPDATE");
    const auto groups = json::parse(store.groups());
    CHECK(groups["groups"].size() == 4);
    CHECK(kept() == "billing");
    read.commit();
    CHECK_NOTHROW(json::parse(store.overview()));
    CHECK(kept() == "billing,wide");
    CHECK(kept_right() == "t");
}

TEST_CASE("the store serves several threads from its small pool of sessions", "[console_store]") {
    TestDatabase db;
    seed(db);
    ConsoleUser user(db);
    postgres::PostgresConsoleStore store(user.url, 2);
    std::atomic<int> answered{0}, failed{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 5; ++i) try {
                    if (json::parse(store.overview()).is_object() && json::parse(store.source("orders.eu")).is_object())
                        ++answered;
                } catch (...) {
                    ++failed;
                }
        });
    for (auto& t : threads) t.join();
    CHECK(answered == 30);
    CHECK(failed == 0);
    // At most the pool's two sessions were opened.
    CHECK(std::stoi(db.scalar("SELECT count(*) FROM pg_stat_activity WHERE usename = '" + user.role.name() + "'")) <=
          2);
}

TEST_CASE("the fold counts each event once: two folds racing, a transaction left open across folds",
          "[console_store]") {
    TestDatabase db;
    seed(db);  // 28 events, folded
    const auto total = [&] { return db.scalar("SELECT coalesce(sum(events), 0) FROM tributary.log_minutes"); };
    const auto per_sources = [&] { return db.scalar("SELECT coalesce(sum(events), 0) FROM tributary.source_minutes"); };
    CHECK(total() == "28");

    // A transaction that stored an event and stays open: the fold waits for it, and counts
    // nothing stored after it began meanwhile either (its horizon stops there).
    pqxx::connection open_connection(db.url());
    pqxx::work open(open_connection);
    open.exec("INSERT INTO tributary.events (source_id, event_id, payload) VALUES (1, 1000, '{}')");
    for (int i = 0; i < 10; ++i)
        db.exec("INSERT INTO tributary.events (source_id, event_id, payload) SELECT 1, 2000 + " +
                std::to_string(i * 100) + " + n, '{}' FROM generate_series(1, 37) n");
    CHECK(db.scalar("SELECT tributary.activity_fold(100000)") == "0");
    CHECK(total() == "28");

    // Two folds at once, many times, in small chunks, while the transaction is still open ...
    std::vector<int> folded(2, 0);
    std::vector<std::string> errors(2);
    open.commit();
    {
        std::vector<std::thread> folders;
        for (int f = 0; f < 2; ++f)
            folders.emplace_back([&, f] {
                try {
                    pqxx::connection c(db.url());
                    for (int i = 0; i < 40; ++i) {
                        pqxx::nontransaction tx(c);
                        folded[f] += tx.exec1("SELECT tributary.activity_fold(7)")[0].as<int>();
                    }
                } catch (const std::exception& e) {
                    errors[f] = e.what();
                }
            });
        for (auto& t : folders) t.join();
    }
    CHECK(errors[0].empty());
    CHECK(errors[1].empty());
    db.exec("SELECT tributary.activity_fold(100000)");
    // ... every event counted exactly once, per source as for the log.
    const auto events = db.scalar("SELECT count(*) FROM tributary.events");
    CHECK(events == "399");
    CHECK(total() == events);
    CHECK(per_sources() == events);
    CHECK(db.scalar("SELECT events FROM tributary.source_minutes WHERE source_id = 1") == "396");
    CHECK(db.scalar("SELECT through IS NOT NULL FROM tributary.activity_position") == "t");
}

TEST_CASE("the fold skips what is older than a day and trims the counts to 24 hours", "[console_store]") {
    TestDatabase db;
    db.exec("INSERT INTO tributary.sources (name, kind, publishers) VALUES ('app.audit', 'published', '{app}')");
    db.exec(
        "INSERT INTO tributary.events (source_id, event_key, payload, loaded_at)"
        " SELECT 1, 'k' || n, '{}', now() - interval '25 hours' FROM generate_series(1, 5) n");
    db.exec("INSERT INTO tributary.events (source_id, event_key, payload) VALUES (1, 'new', '{}')");
    db.exec("INSERT INTO tributary.log_minutes VALUES (date_trunc('minute', now() - interval '2 days'), 9)");
    db.exec("INSERT INTO tributary.source_minutes VALUES (1, date_trunc('minute', now() - interval '2 days'), 9)");
    CHECK(db.scalar("SELECT tributary.activity_fold(1000)") == "6");
    CHECK(db.scalar("SELECT sum(events) FROM tributary.log_minutes") == "1");
    CHECK(db.scalar("SELECT sum(events) FROM tributary.source_minutes") == "1");
}

TEST_CASE("a failed close records an episode per run of the same error; 20 kept per source", "[console_store]") {
    TestDatabase db;
    db.exec("INSERT INTO tributary.sources (name, kind, url) VALUES ('flaky', 'http', 'https://x.example/')");
    db.exec("INSERT INTO tributary.cursors (source_id, last_event_id) VALUES (1, 0)");
    db.exec("INSERT INTO tributary.gates (source_id) VALUES (1)");
    int lease = 0;
    const auto fail = [&](const std::string& error) {
        ++lease;
        db.exec("UPDATE tributary.gates SET lease = " + std::to_string(lease));
        db.exec("SELECT tributary.loader_close_failed(1, NULL, " + std::to_string(lease) + ", 1, 'transient', '" +
                error + "')");
    };
    const auto episodes = [&] {
        return db.scalar("SELECT string_agg(error || 'x' || count, ',' ORDER BY id) FROM tributary.source_errors");
    };
    fail("timeout");
    fail("timeout");
    // A close replayed under the same lease (its commit unconfirmed) records nothing more.
    db.exec("SELECT tributary.loader_close_failed(1, NULL, " + std::to_string(lease) + ", 1, 'transient', 'timeout')");
    fail("HTTP 503");
    fail("timeout");
    CHECK(episodes() == "timeoutx2,HTTP 503x1,timeoutx1");
    // A success in between: the same text again is a new episode.
    ++lease;
    db.exec("UPDATE tributary.gates SET lease = " + std::to_string(lease));
    db.exec("SELECT tributary.loader_close_succeeded(1, NULL, " + std::to_string(lease) + ", 1, 1, false, NULL)");
    fail("timeout");
    CHECK(episodes() == "timeoutx2,HTTP 503x1,timeoutx1,timeoutx1");
    for (int i = 0; i < 25; ++i) fail("error " + std::to_string(i));
    CHECK(db.scalar("SELECT count(*) FROM tributary.source_errors") == "20");
    CHECK(db.scalar("SELECT min(error) || '..' || max(id) FROM tributary.source_errors WHERE error LIKE 'error 5'") ==
          "error 5.." + db.scalar("SELECT min(id) FROM tributary.source_errors"));

    // `source remove` takes them along.
    run_tributary(db.url(), {"source", "remove", "flaky"});
    CHECK(db.scalar("SELECT count(*) FROM tributary.source_errors") == "0");
}

TEST_CASE("a maintainer's pass folds the per-minute counts, as a member of tributary_maintainer", "[console_store]") {
    TestDatabase db;
    seed(db);
    db.exec(
        "INSERT INTO tributary.events (source_id, event_key, payload) SELECT 3, 'more' || n, '{}' FROM "
        "generate_series(1, 40) n");
    LoginRole maintainer(db, "maintainer");
    run_tributary(db.url(), {"grant", "maintainer", maintainer.name()});
    run_tributary(as_user(db.url(), maintainer.name()), {"maintain", "--once"});
    CHECK(db.scalar("SELECT sum(events) FROM tributary.log_minutes") == "68");
    CHECK(db.scalar("SELECT sum(events) FROM tributary.source_minutes WHERE source_id = 3") == "43");
}
