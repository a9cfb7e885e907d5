// `source check NAME` asks a source as the loader would and stores nothing; `source add --check`
// registers nothing when the first page would fail; `source edit NAME --flag ...` changes a
// source's settings in place, keeping the cursor, asking for a rewind, or refusing, and running
// loaders take the change at their next turn (docs/sources.md "Checking a source", "Editing a
// source"). Through the real binary, against PostgreSQL and the source server.

#include <csignal>
#include <thread>

#include <catch2/catch.hpp>
#include <pqxx/pqxx>

#include "support/child_process.h"
#include "support/login_role.h"
#include "support/source_server.h"
#include "support/stored_truth.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;

namespace {

const int kBacklog = 25;

/// Everything a check could have written, as text: the sources and every row that goes with
/// them (gates with their times, cursors, tokens, errors, rewinds, edits) and the log's size.
std::string database_state(const TestDatabase& db) {
    return db.scalar(
        "SELECT concat_ws(' | ', "
        "(SELECT string_agg(s::text, ',' ORDER BY s.id) FROM tributary.sources s), "
        "(SELECT string_agg(g::text, ',' ORDER BY g.source_id) FROM tributary.gates g), "
        "(SELECT string_agg(c::text, ',' ORDER BY c.source_id) FROM tributary.cursors c), "
        "(SELECT count(*) FROM tributary.events), (SELECT count(*) FROM tributary.event_keys), "
        "(SELECT count(*) FROM tributary.access_tokens), (SELECT count(*) FROM tributary.source_errors), "
        "(SELECT count(*) FROM tributary.cursor_rewinds), (SELECT count(*) FROM tributary.source_edits))");
}

/// The database's URL with every transaction read-only: any write fails.
std::string read_only(const std::string& url) {
    return url + (url.find('?') == std::string::npos ? "?" : "&") + "options=-c%20default_transaction_read_only%3Don";
}

std::vector<std::string> after_key_flags(const SourceServer& server, const std::string& server_source) {
    return {"--url",         server.style_url("after-key", server_source),
            "--records",     "/data",
            "--key",         "/key",
            "--payload",     "/payload",
            "--paginate",    "after-key",
            "--has-more",    "/has_more",
            "--batch-size",  "10",
            "--interval-ms", "1"};
}

void add_source(const TestDatabase& db, const std::string& name, std::vector<std::string> flags) {
    std::vector<std::string> args{"source", "add", name};
    args.insert(args.end(), flags.begin(), flags.end());
    run_tributary(db.url(), args);
}

void load(const TestDatabase& db) { run_tributary(db.url(), {"run", "--workers", "1", "--until-idle"}); }

long long stored_of(const TestDatabase& db, const std::string& name) {
    return std::stoll(db.scalar(
        "SELECT count(*) FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id WHERE s.name = '" +
        name + "'"));
}

long long edits_of(const TestDatabase& db, const std::string& name) {
    return std::stoll(
        db.scalar("SELECT count(*) FROM tributary.source_edits e JOIN tributary.sources s ON s.id = "
                  "e.source_id WHERE s.name = '" +
                  name + "'"));
}

std::size_t requests_of(const SourceServer& server, const std::string& source) {
    return server.requests(source).size();
}

}  // namespace

TEST_CASE("source check asks the first two pages as the loader would and writes nothing", "[source-check]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "ck.", "--backlog", std::to_string(kBacklog), "--rate-limit",
                         "100", "--rate-window-ms", "60000"});
    add_source(db, "orders", after_key_flags(server, "ck.0"));
    const auto before = database_state(db);

    SECTION("as a table") {
        const auto done = run_tributary(read_only(db.url()), {"source", "check", "orders"});
        INFO(done.out);
        CHECK_THAT(done.out, Catch::Contains("paginate after-key") && Catch::Contains("from cursor \"\""));
        CHECK_THAT(done.out, Catch::Contains("evt-0000000001 .. evt-0000000010"));
        CHECK_THAT(done.out, Catch::Contains("evt-0000000011 .. evt-0000000020"));
        CHECK_THAT(done.out, Catch::Contains("\"evt-0000000020\""));
        CHECK_THAT(done.out, Catch::Contains("X-RateLimit-Remaining: 98"));
        CHECK_THAT(done.out, Catch::Contains("ok: the loader would store 20 records from these pages; nothing was "
                                             "stored"));
        CHECK(requests_of(server, "ck.0") == 2);
    }
    SECTION("as JSON") {
        const auto done = run_tributary(read_only(db.url()), {"source", "check", "orders", "--json"});
        const auto j = nlohmann::json::parse(done.out);
        INFO(j.dump(2));
        CHECK(j["ok"] == true);
        CHECK(j["records"] == 20);
        CHECK(j["stored"] == 0);
        REQUIRE(j["pages"].size() == 2);
        CHECK(j["cursor"] == "");
        CHECK(j["pages"][0]["cursor"] == "");
        CHECK(j["pages"][0]["keys"].size() == 10);
        CHECK(j["pages"][0]["next"] == "evt-0000000010");
        CHECK(j["pages"][0]["at_end"] == false);
        CHECK(j["pages"][1]["cursor"] == "evt-0000000010");
        CHECK(j["pages"][1]["keys"][9] == "evt-0000000020");
        CHECK(j["pages"][1]["rate_limit_headers"]["X-RateLimit-Limit"] == "100");
    }
    SECTION("from the cursor the loader would ask at next, and to the end") {
        load(db);
        REQUIRE(stored_of(db, "orders") == kBacklog);
        const auto loaded = database_state(db);
        const auto done = run_tributary(read_only(db.url()), {"source", "check", "orders", "--json"});
        const auto j = nlohmann::json::parse(done.out);
        INFO(j.dump(2));
        CHECK(j["cursor"] == "evt-0000000025");
        REQUIRE(j["pages"].size() == 1);  // nothing new: the end for now, no second request
        CHECK(j["pages"][0]["records"] == 0);
        CHECK(j["pages"][0]["at_end"] == true);
        CHECK(database_state(db) == loaded);
        return;
    }
    CHECK(database_state(db) == before);
}

TEST_CASE("source check of a source whose page would fail exits 1 with the loader's reason", "[source-check]") {
    TestDatabase db;
    SourceServer server({"--sources", "2", "--prefix", "bad.", "--backlog", std::to_string(kBacklog)});
    auto flags = after_key_flags(server, "bad.0");
    flags[3] = "/items";  // --records: where this API has none
    add_source(db, "wrong-records", flags);
    add_source(db, "gone", {"--url", server.events_url("bad.1")});
    server.set_fault("bad.1", "http-404");
    const auto before = database_state(db);

    const auto records = run_tributary(read_only(db.url()), {"source", "check", "wrong-records"}, 1);
    INFO(records.out);
    CHECK_THAT(records.out, Catch::Contains("the loader would fail: failing:") && Catch::Contains("/items"));
    CHECK(requests_of(server, "bad.0") == 1);

    const auto status = run_tributary(read_only(db.url()), {"source", "check", "gone", "--json"}, 1);
    const auto j = nlohmann::json::parse(status.out);
    INFO(j.dump(2));
    CHECK(j["ok"] == false);
    CHECK_THAT(j["reason"].get<std::string>(), Catch::Contains("HTTP 404"));
    CHECK(database_state(db) == before);

    CHECK_THAT(run_tributary(db.url(), {"source", "check", "nothing-here"}, 1).err,
               Catch::Contains("no source named 'nothing-here'"));
    run_tributary(db.url(), {"source", "add", "hook", "--push", "--bearer-token-env", "HOOK_TOKEN"});
    CHECK_THAT(run_tributary(db.url(), {"source", "check", "hook"}).out,
               Catch::Contains("nothing to check: nobody asks a pushed source"));
}

TEST_CASE("source add --check registers nothing when the first page would fail", "[source-check]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "ac.", "--backlog", std::to_string(kBacklog)});
    auto flags = after_key_flags(server, "ac.0");
    flags[3] = "/items";
    std::vector<std::string> args{"source", "add", "orders", "--check"};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto refused = run_tributary(db.url(), args, 1);
    CHECK_THAT(refused.out, Catch::Contains("the loader would fail"));
    CHECK_THAT(refused.err, Catch::Contains("source orders not added"));
    CHECK(db.scalar("SELECT count(*) FROM tributary.sources") == "0");

    args[7] = "/data";
    const auto added = run_tributary(db.url(), args);
    CHECK_THAT(added.out,
               Catch::Contains("ok: the loader would store 20 records") && Catch::Contains("added source orders"));
    load(db);
    check_stored_exactly_once(db, server, "orders", "ac.0", "after-key");
}

TEST_CASE("source edit keeps the cursor, asks for a rewind, or refuses, and records each edit", "[source-edit]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "ed.", "--backlog", std::to_string(kBacklog)});
    add_source(db, "orders", after_key_flags(server, "ed.0"));
    load(db);
    REQUIRE(stored_of(db, "orders") == kBacklog);

    SECTION("a change that keeps the cursor") {
        const auto done = run_tributary(db.url(), {"source", "edit", "orders", "--batch-size", "7", "--header",
                                                   "Authorization: Bearer s3cret-value"});
        CHECK(done.out == "edited orders: batch_size, headers (revision 1)\n");
        const auto row = status_by_name(db.url())["orders"];
        CHECK(row["cursor"] == "evt-0000000025");
        CHECK(row["last_rewind"].is_null());
        // The other settings are as they were.
        const auto listed = nlohmann::json::parse(run_tributary(db.url(), {"source", "list", "--json"}).out)[0];
        INFO(listed.dump(2));
        CHECK(listed["batch_size"] == 7);
        CHECK(listed["interval_ms"] == 1);
        CHECK(listed["reading"]["paginate"] == "after-key");
        CHECK(listed["reading"]["has_more"] == "/has_more");
        // Recorded: who, when, old and new, the header's value never.
        REQUIRE(edits_of(db, "orders") == 1);
        const auto changes = nlohmann::json::parse(db.scalar("SELECT changes FROM tributary.source_edits"));
        CHECK(changes["batch_size"] == nlohmann::json({{"old", 10}, {"new", 7}}));
        CHECK(changes["headers"]["new"] == nlohmann::json::array({"Authorization: <redacted>"}));
        CHECK(db.scalar("SELECT count(*) FROM tributary.source_edits WHERE changes::text LIKE '%s3cret%'") == "0");
        CHECK(db.scalar("SELECT edited_by = current_user AND edited_at <= now() AND rewound_to IS NULL "
                        "FROM tributary.source_edits") == "t");
        // Given again, nothing changes.
        CHECK(run_tributary(db.url(), {"source", "edit", "orders", "--batch-size", "7"}).out ==
              "source orders: nothing to change\n");
        CHECK(edits_of(db, "orders") == 1);
        load(db);
        check_stored_exactly_once(db, server, "orders", "ed.0", "after-key");
    }
    SECTION("a change of what the cursor means needs a rewind") {
        const std::vector<std::string> to_cursor{
            "source",     "edit",   "orders", "--url",       server.style_url("cursor", "ed.0"),
            "--paginate", "cursor", "--next", "/next_cursor"};
        const auto refused = run_tributary(db.url(), to_cursor, 2);
        CHECK_THAT(refused.err, Catch::Contains("changing next, paginate of source 'orders' changes what its "
                                                "cursor means: give --rewind-to"));
        CHECK(edits_of(db, "orders") == 0);
        CHECK(db.scalar("SELECT revision FROM tributary.sources") == "0");

        auto with_rewind = to_cursor;
        with_rewind.insert(with_rewind.end(), {"--rewind-to", ""});
        const auto done = run_tributary(db.url(), with_rewind);
        CHECK(done.out ==
              "edited orders: has_more, next, paginate, url (revision 1); cursor rewound from "
              "evt-0000000025 to \"\"\n");
        const auto row = status_by_name(db.url())["orders"];
        CHECK(row["paginate"] == "cursor");
        CHECK(row["last_rewind"]["from"] == "evt-0000000025");
        CHECK(row["last_rewind"]["to"] == "");
        CHECK(db.scalar("SELECT rewound_from || ' -> [' || rewound_to || ']' FROM tributary.source_edits") ==
              "evt-0000000025 -> []");
        // Read again from the start in the new style: stored once each all the same.
        load(db);
        check_stored_exactly_once(db, server, "orders", "ed.0", "cursor");
    }
    SECTION("the key of a source that stored events is refused outright") {
        const auto key = run_tributary(db.url(), {"source", "edit", "orders", "--key", "/id", "--rewind-to", ""}, 2);
        CHECK_THAT(key.err, Catch::Contains("has stored 25 events: its key cannot change"));
        const auto by_id =
            run_tributary(db.url(), {"source", "edit", "orders", "--paginate", "after-id", "--rewind-to", "0"}, 2);
        CHECK_THAT(by_id.err, Catch::Contains("cannot change") && Catch::Contains("after-id"));
        CHECK(edits_of(db, "orders") == 0);
        CHECK_THAT(run_tributary(db.url(), {"source", "edit", "orders", "--after-id", "3"}, 2).err,
                   Catch::Contains("use --rewind-to"));
        CHECK_THAT(run_tributary(db.url(), {"source", "edit", "orders", "--rewind-to", ""}, 2).err,
                   Catch::Contains("tributary source rewind orders"));
    }
}

TEST_CASE("a loader's claim with settings older than the source's is refused", "[source-edit]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "rv.", "--backlog", "1"});
    add_source(db, "orders", after_key_flags(server, "rv.0"));
    run_tributary(db.url(), {"source", "edit", "orders", "--interval-ms", "5"});
    const std::string claim =
        "SELECT decision FROM tributary.loader_claim((SELECT id FROM tributary.sources), 7, 1000, ";
    CHECK(db.scalar(claim + "0)") == "changed");
    CHECK(db.scalar(claim + "1)") == "pass");
}

TEST_CASE("a running loader takes an edit at its next turn, and a failing source's backoff ends", "[source-edit]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "lv.", "--backlog", std::to_string(kBacklog)});
    auto flags = after_key_flags(server, "lv.0");
    flags[1] = server.style_url("after-key", "no-such-source");  // 404
    add_source(db, "orders", flags);
    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "1"}));
    for (int i = 0; i < 400 && status_by_name(db.url())["orders"]["state"] != "failing"; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(status_by_name(db.url())["orders"]["state"] == "failing");
    REQUIRE(db.scalar("SELECT next_allowed_at > now() + interval '5 s' FROM tributary.gates") == "t");
    const auto backoff_until = db.scalar("SELECT next_allowed_at FROM tributary.gates");

    run_tributary(db.url(), {"source", "edit", "orders", "--url", server.style_url("after-key", "lv.0")});
    for (int i = 0; i < 600 && stored_of(db, "orders") < kBacklog; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    loader.signal(SIGTERM);
    REQUIRE(loader.wait_for(std::chrono::seconds(20)) == 0);
    check_stored_exactly_once(db, server, "orders", "lv.0", "after-key");
    // No longer failing. `throttled` is as good: a loader stopped just after a good answer whose
    // pause ran longer than the interval shows that (seen once under a full test run's load).
    const auto state = status_by_name(db.url())["orders"]["state"];
    CHECK((state == "ok" || state == "throttled"));
    // Asked again after its interval, not after the backoff, by the database's clock.
    CHECK(db.scalar("SELECT last_success_at < '" + backoff_until + "'::timestamptz FROM tributary.gates") == "t");
}

TEST_CASE("a loader or an admin may check a source; only an admin may edit one", "[source-check][source-edit]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "ro.", "--backlog", "3"});
    add_source(db, "orders", after_key_flags(server, "ro.0"));
    LoginRole loader(db, "loader"), admin(db, "admin");
    run_tributary(db.url(), {"grant", "loader", loader.name()});
    run_tributary(db.url(), {"grant", "admin", admin.name()});
    for (const auto& role : {loader.name(), admin.name()})
        CHECK_THAT(run_tributary(as_user(db.url(), role), {"source", "check", "orders"}).out,
                   Catch::Contains("ok: the loader would store 3 records"));
    CHECK_THAT(
        run_tributary(as_user(db.url(), loader.name()), {"source", "edit", "orders", "--interval-ms", "3"}, 1).err,
        Catch::Contains("permission denied"));
    run_tributary(as_user(db.url(), admin.name()), {"source", "edit", "orders", "--interval-ms", "3"});
    CHECK(db.scalar("SELECT edited_by FROM tributary.source_edits") == admin.name());
}

TEST_CASE("an edit waits for a turn in flight at the source to end", "[source-edit]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "wt.", "--backlog", "1"});
    add_source(db, "orders", after_key_flags(server, "wt.0"));
    // A turn in flight holds the source's lock, as loader_claim takes it (the loaders' namespace).
    pqxx::connection turn(db.url());
    pqxx::nontransaction(turn).exec("SELECT pg_advisory_lock(x'74726962'::int, (SELECT id FROM tributary.sources))");
    ChildProcess edit(tributary_args(db.url(), {"source", "edit", "orders", "--interval-ms", "9"}));
    const std::string waiting =
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = "
        "(SELECT oid FROM pg_database WHERE datname = current_database())";
    for (int i = 0; i < 400 && db.scalar(waiting) == "0"; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    REQUIRE(db.scalar(waiting) == "1");
    CHECK(db.scalar("SELECT revision FROM tributary.sources") == "0");
    pqxx::nontransaction(turn).exec("SELECT pg_advisory_unlock_all()");
    REQUIRE(edit.wait_for(std::chrono::seconds(30)) == 0);
    CHECK(db.scalar("SELECT revision || ' ' || interval_ms FROM tributary.sources") == "1 9");
}

TEST_CASE("source edit carries every stored setting over, --inclusive too, and a flag turns off with =false",
          "[source-edit]") {
    TestDatabase db;
    auto flags = std::vector<std::string>{"--url",
                                          "http://127.0.0.1:9/items",
                                          "--records",
                                          "",
                                          "--key",
                                          "/key",
                                          "--paginate",
                                          "after-key",
                                          "--cursor-param",
                                          "key_gte",
                                          "--inclusive",
                                          "--param",
                                          "order=key",
                                          "--bearer-env",
                                          "API_TOKEN",
                                          "--batch-size",
                                          "50"};
    add_source(db, "incl", flags);
    const auto reading = [&] {
        return nlohmann::json::parse(run_tributary(db.url(), {"source", "list", "--json"}).out)[0]["reading"];
    };
    const auto before = reading();
    CHECK(run_tributary(db.url(), {"source", "edit", "incl", "--interval-ms", "5"}).out ==
          "edited incl: interval_ms (revision 1)\n");
    CHECK(reading() == before);
    CHECK(run_tributary(db.url(), {"source", "edit", "incl", "--inclusive=false"}).out ==
          "edited incl: inclusive (revision 2)\n");
    auto expected = before;
    expected.erase("inclusive");
    CHECK(reading() == expected);
}
