// `source rewind NAME --to CURSOR`: a source reads again from an earlier position; what is
// stored is skipped by key, so a rewind repairs a gap without duplicates, and status shows who
// rewound it, when, from where and to where.

#include <catch2/catch.hpp>

#include "support/source_server.h"
#include "support/stored_truth.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;

namespace {

const int kBacklog = 50;

long long stored_of(const TestDatabase& db, const std::string& name) {
    return std::stoll(db.scalar(
        "SELECT count(*) FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id WHERE s.name = '" +
        name + "'"));
}

/// A gap in the log: the events gone, and their keys with them (a key stays
/// in tributary.event_keys exactly as long as its event is in the log).
void delete_stored(const TestDatabase& db, const std::string& name, const std::string& condition) {
    db.exec(
        "WITH gone AS (DELETE FROM tributary.events e USING tributary.sources s WHERE s.id = e.source_id AND "
        "s.name = '" +
        name + "' AND " + condition +
        " RETURNING e.source_id, e.event_key) "
        "DELETE FROM tributary.event_keys k USING gone WHERE k.source_id = gone.source_id AND "
        "k.event_key = gone.event_key");
}

void load(const TestDatabase& db) { run_tributary(db.url(), {"run", "--workers", "2", "--until-idle"}); }

}  // namespace

TEST_CASE("rewinding a source by id re-reads without duplicates and repairs a gap", "[rewind]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "rw.", "--backlog", std::to_string(kBacklog)});
    run_tributary(db.url(), {"source", "add", "by-id", "--url", server.events_url("rw.0"), "--batch-size", "20",
                             "--interval-ms", "1"});
    load(db);
    REQUIRE(stored_of(db, "by-id") == kBacklog);

    SECTION("a rewind over what is stored stores nothing twice") {
        const auto done = run_tributary(db.url(), {"source", "rewind", "by-id", "--to", "10"});
        CHECK_THAT(done.out, Catch::Contains("rewound by-id from 50 to 10"));
        CHECK(status_by_name(db.url())["by-id"]["cursor"] == 10);
        load(db);
        check_stored_exactly_once(db, server, "by-id", "rw.0", "", {{"/id"}, "/payload"});
        const auto row = status_by_name(db.url())["by-id"];
        INFO(row.dump());
        CHECK(row["cursor"] == kBacklog);
        REQUIRE(row["last_rewind"].is_object());
        CHECK(row["last_rewind"]["from"] == "50");
        CHECK(row["last_rewind"]["to"] == "10");
        CHECK(row["last_rewind"]["by"] == db.scalar("SELECT current_user"));
        CHECK_THAT(row["last_rewind"]["at"].get<std::string>(), Catch::Matches(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"));
        // Only what was stored again would have been served twice: the requests after the rewind
        // asked from id 10.
        CHECK(server.requests("rw.0").back()["after_id"] == kBacklog);
    }
    SECTION("a gap upstream is repaired") {
        delete_stored(db, "by-id", "e.event_id BETWEEN 21 AND 30");
        REQUIRE(stored_of(db, "by-id") == kBacklog - 10);
        run_tributary(db.url(), {"source", "rewind", "by-id", "--to", "20"});
        load(db);
        check_stored_exactly_once(db, server, "by-id", "rw.0", "", {{"/id"}, "/payload"});
    }
    SECTION("a bad --to is refused, the cursor stays") {
        const auto not_a_number = run_tributary(db.url(), {"source", "rewind", "by-id", "--to", "evt-1"}, 2);
        CHECK_THAT(not_a_number.err, Catch::Contains("--to must be an id"));
        const auto ahead = run_tributary(db.url(), {"source", "rewind", "by-id", "--to", "51"}, 2);
        CHECK_THAT(ahead.err, Catch::Contains("after the cursor"));
        const auto row = status_by_name(db.url())["by-id"];
        CHECK(row["cursor"] == kBacklog);
        CHECK(row["last_rewind"].is_null());
    }
}

TEST_CASE("rewinding a keyed source to a key or to the start re-reads without duplicates and repairs a gap",
          "[rewind]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "rk.", "--backlog", std::to_string(kBacklog)});
    run_tributary(db.url(), {"source", "add", "keyed", "--url", server.style_url("after-key", "rk.0"), "--records",
                             "/data", "--key", "/key", "--payload", "/payload", "--paginate", "after-key", "--has-more",
                             "/has_more", "--batch-size", "20", "--interval-ms", "1"});
    load(db);
    REQUIRE(stored_of(db, "keyed") == kBacklog);
    const auto last_key = status_by_name(db.url())["keyed"]["cursor"].get<std::string>();
    CHECK(last_key == "evt-0000000050");

    SECTION("back to the start") {
        run_tributary(db.url(), {"source", "rewind", "keyed", "--to", ""});
        load(db);
        check_stored_exactly_once(db, server, "keyed", "rk.0", "after-key");
        const auto row = status_by_name(db.url())["keyed"];
        INFO(row.dump());
        CHECK(row["cursor"] == last_key);
        REQUIRE(row["last_rewind"].is_object());
        CHECK(row["last_rewind"]["from"] == last_key);
        CHECK(row["last_rewind"]["to"] == "");
        // Read again from the first page: every record was served twice, stored once.
        long long served = 0;
        for (const auto& r : server.requests("rk.0")) served += r["events"].get<long long>();
        CHECK(served == 2 * kBacklog);
    }
    SECTION("a gap upstream is repaired from a key") {
        delete_stored(db, "keyed", "e.event_key BETWEEN 'evt-0000000021' AND 'evt-0000000035'");
        REQUIRE(stored_of(db, "keyed") == kBacklog - 15);
        run_tributary(db.url(), {"source", "rewind", "keyed", "--to", "evt-0000000020"});
        load(db);
        check_stored_exactly_once(db, server, "keyed", "rk.0", "after-key");
        const auto row = status_by_name(db.url())["keyed"];
        CHECK(row["last_rewind"]["to"] == "evt-0000000020");
        CHECK(row["cursor"] == last_key);
    }
}
