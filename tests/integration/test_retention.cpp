// Retention (issue 16, items 3-4) through real `tributary maintain --once` passes on a log cut
// into small partitions: what a consumer group holds back, --drop-unconsumed, archive-then-drop
// through a real command, and keys leaving with their events.

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support/child_process.h"
#include "support/login_role.h"
#include "support/partitioned_log.h"
#include "support/source_server.h"
#include "support/stored_truth.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

/// `maintain --once` (with `extra` flags; as the login of `url`, else the owner) pass after pass until `condition`
/// (SQL, boolean) holds; the passes' logs. Fails the test when it never does within 40 passes.
std::string maintain_until(const TestDatabase& db, const std::string& condition,
                           const std::vector<std::string>& extra = {}, const std::string& url = "") {
    std::string logs;
    for (int pass = 0; pass < 40; ++pass) {
        std::vector<std::string> args = {"maintain", "--once"};
        args.insert(args.end(), extra.begin(), extra.end());
        logs += run_tributary(url.empty() ? db.url() : url, args).err;
        if (db.scalar("SELECT " + condition) == "t") return logs;
        std::this_thread::sleep_for(300ms);  // a pass is cheap; --keep 1s needs the clock to move
    }
    FAIL("never held: " << condition << "\n" << logs);
    return logs;
}

std::string state_of(const std::string& partition) {
    return "(SELECT state FROM tributary.partition_retention() WHERE name = '" + partition + "')";
}

std::string gone(const std::string& partition) {
    return "NOT EXISTS (SELECT FROM tributary.partitions WHERE name = '" + partition + "')";
}

/// A published source `p` with `count` events k0.. in the first small partition, the log moved
/// on past it; the partition's name.
std::string published_partition(const TestDatabase& db, int count) {
    cut_into_small_partitions(db, 4, 30);
    run_tributary(db.url(), {"source", "add", "p", "--published"});
    for (int i = 0; i < count; ++i)
        db.exec("SELECT tributary.publish('p', 'k" + std::to_string(i) + "', '{\"n\": " + std::to_string(i) + "}')");
    const auto partition = partition_of(db, "p", "k0");
    REQUIRE(partition_of(db, "p", "k" + std::to_string(count - 1)) == partition);
    use_transaction_ids(db, 40);
    return partition;
}

/// The partitions holding events of source `name`, comma-separated in log order.
std::string partitions_holding(const TestDatabase& db, const std::string& name) {
    return db.scalar(
        "SELECT coalesce(string_agg(p, ',' ORDER BY p), '') FROM (SELECT DISTINCT e.tableoid::regclass::text AS p "
        "FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id WHERE s.name = '" +
        name + "') q");
}

/// Loads until nothing is left to fetch; takes no part in maintaining (the test's passes do).
void load(const TestDatabase& db) {
    run_tributary(db.url(), {"run", "--workers", "1", "--until-idle", "--no-maintain"});
}

std::string scratch_dir() {
    char pattern[] = "/tmp/tributary-archive.XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    return pattern;
}

}  // namespace

TEST_CASE("retention: a group behind holds a partition back until it has read and acked it", "[retention]") {
    TestDatabase db;
    run_tributary(db.url(), {"group", "create", "g", "--from", "beginning"});
    const auto partition = published_partition(db, 10);
    run_tributary(db.url(), {"retention", "set", "--keep", "1s"});

    auto held = maintain_until(db, state_of(partition) + " = 'held'");
    CHECK(db.scalar("SELECT array_to_string(held_by, ',') FROM tributary.partition_retention() WHERE name = '" +
                    partition + "'") == "g");
    // The state above is judged at its own now(): the pass before it may have run while the
    // partition was still within --keep. The next pass finds it held, and says so.
    held += run_tributary(db.url(), {"maintain", "--once"}).err;
    CHECK_THAT(held, Catch::Contains("retention held back by group g: partition " + partition));
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "10");

    std::vector<std::string> got;
    for (const auto& batch : consume_all(db, "g")) got.insert(got.end(), batch.begin(), batch.end());
    CHECK(got.size() == 10);

    const auto dropped = maintain_until(db, gone(partition));
    CHECK_THAT(dropped, Catch::Contains("retention: dropped partition " + partition));
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "0");
    CHECK(db.scalar("SELECT count(*) FROM tributary.event_keys") == "0");
}

TEST_CASE("retention: --drop-unconsumed drops a partition a group still needs, and says how much it lost",
          "[retention]") {
    TestDatabase db;
    run_tributary(db.url(), {"group", "create", "slow", "--from", "beginning"});
    const auto partition = published_partition(db, 7);
    run_tributary(db.url(), {"retention", "set", "--keep", "1s", "--drop-unconsumed"});

    const auto logs = maintain_until(db, gone(partition));
    CHECK_THAT(logs, Catch::Contains("partition " + partition +
                                     " dropped with 7 event(s) consumer group slow had "
                                     "not consumed"));
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "0");
}

TEST_CASE("retention: a key leaves with its event; published again after the drop it is stored again", "[retention]") {
    TestDatabase db;
    const auto partition = published_partition(db, 3);
    CHECK(db.scalar("SELECT tributary.publish('p', 'k1', '{}')") == "f");  // rolled over: still known
    run_tributary(db.url(), {"retention", "set", "--keep", "1s"});
    maintain_until(db, gone(partition));
    CHECK(db.scalar("SELECT count(*) FROM tributary.event_keys") == "0");
    CHECK(db.scalar("SELECT tributary.publish('p', 'k1', '{\"again\": true}')") == "t");
    CHECK(db.scalar("SELECT count(*) FROM tributary.events WHERE event_key = 'k1'") == "1");
    CHECK(db.scalar("SELECT payload::text FROM tributary.events WHERE event_key = 'k1'") == "{\"again\": true}");
}

TEST_CASE("retention: a partition to archive goes to the command first, and is dropped only after it exits 0",
          "[retention]") {
    TestDatabase db;
    const auto partition = published_partition(db, 12);
    const auto dir = scratch_dir();
    // What the archive must hold: the partition's rows as the maintainer's COPY writes them.
    const auto expected = dir + "/expected.csv";
    const auto copied =
        run_program({"/bin/sh", "-c",
                     "psql -X -q '" + db.url() +
                         "' -c 'COPY (SELECT seq, source_id, event_id, event_key, tx_id, loaded_at, "
                         "payload FROM tributary." +
                         partition + " ORDER BY tx_id, seq) TO STDOUT (FORMAT csv, HEADER true)' > " + expected});
    REQUIRE(copied.code == 0);
    run_tributary(db.url(), {"retention", "set", "--keep", "1s", "--archive"});

    SECTION("without --archive-command it stays, and the maintainer says why") {
        const auto logs = maintain_until(db, state_of(partition) + " = 'archive'");
        const auto again = run_tributary(db.url(), {"maintain", "--once"}).err;
        CHECK_THAT(logs + again, Catch::Contains("has no --archive-command"));
        CHECK(db.scalar(state_of(partition)) == "archive");
    }
    SECTION("a failing command keeps it and counts the failure; a working one archives and drops it") {
        const auto failing = maintain_until(
            db, "(SELECT archive_failures FROM tributary.partitions WHERE name = '" + partition + "') >= 1",
            {"--archive-command", "cat >/dev/null; echo no space left >&2; exit 1"});
        CHECK_THAT(failing, Catch::Contains("archiving partition " + partition + " failed"));
        CHECK(db.scalar("SELECT archive_error FROM tributary.partitions WHERE name = '" + partition + "'")
                  .find("no space left") != std::string::npos);
        CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "12");

        maintain_until(db, gone(partition), {"--archive-command", "gzip > " + dir + "/$TRIBUTARY_PARTITION.csv.gz"});
        const auto archive = dir + "/" + partition + ".csv.gz";
        const auto same = run_program({"/bin/sh", "-c", "gzip -dc '" + archive + "' | cmp - '" + expected + "'"});
        CHECK(same.code == 0);
        INFO(same.out << same.err);
        CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "0");
    }
    SECTION("a login with only the maintainer's role archives and drops it (it may read the log, not its tables)") {
        LoginRole maintainer(db, "maint");
        run_tributary(db.url(), {"grant", "maintainer", maintainer.name()});
        maintain_until(db, gone(partition), {"--archive-command", "cat > " + dir + "/$TRIBUTARY_PARTITION.csv"},
                       as_user(db.url(), maintainer.name()));
        const auto same = run_program({"/usr/bin/cmp", dir + "/" + partition + ".csv", expected});
        INFO(same.out << same.err);
        CHECK(same.code == 0);
    }
    run_program({"/bin/rm", "-rf", dir});
}

TEST_CASE(
    "retention: a pulled key served again after its partition rolled over is stored once; after the "
    "partition was dropped it is stored again",
    "[retention]") {
    TestDatabase db;
    cut_into_small_partitions(db, 4, 50);
    SourceServer server({"--sources", "1", "--prefix", "rk.", "--backlog", "20"});
    run_tributary(db.url(), {"source", "add", "keyed", "--url", server.style_url("after-key", "rk.0"), "--key", "/key",
                             "--payload", "/payload", "--records", "/data", "--paginate", "after-key", "--has-more",
                             "/has_more", "--batch-size", "200", "--interval-ms", "1"});
    load(db);
    check_stored_exactly_once(db, server, "keyed", "rk.0", "after-key");
    const auto first = partitions_holding(db, "keyed");
    REQUIRE(first.find(',') == std::string::npos);
    const auto partition = first.substr(first.find('.') + 1);
    use_transaction_ids(db, 60);

    // Served again from the start while its partition is sealed behind the log's end: the keys
    // are known, nothing is stored.
    run_tributary(db.url(), {"source", "rewind", "keyed", "--to", ""});
    load(db);
    check_stored_exactly_once(db, server, "keyed", "rk.0", "after-key");
    CHECK(partitions_holding(db, "keyed") == first);

    run_tributary(db.url(), {"retention", "set", "--keep", "1s"});
    maintain_until(db, gone(partition));
    CHECK(partitions_holding(db, "keyed") == "");
    CHECK(db.scalar("SELECT count(*) FROM tributary.event_keys") == "0");

    // Keys leave with their events: served again, each is a new event.
    run_tributary(db.url(), {"source", "rewind", "keyed", "--to", ""});
    load(db);
    check_stored_exactly_once(db, server, "keyed", "rk.0", "after-key");
    CHECK(partitions_holding(db, "keyed") != first);
}

TEST_CASE(
    "retention: an id-keyed source keeps loading while its partitions are dropped: what stays is every id "
    "after the dropped ones, once",
    "[retention]") {
    TestDatabase db;
    cut_into_small_partitions(db, 3, 40);
    const int total = 200;
    SourceServer server({"--sources", "1", "--prefix", "ri.", "--backlog", "10", "--rate", "40", "--max-events",
                         std::to_string(total)});
    run_tributary(db.url(), {"source", "add", "by-id", "--url", server.events_url("ri.0"), "--batch-size", "20",
                             "--interval-ms", "1"});
    run_tributary(db.url(), {"retention", "set", "--keep", "1s"});
    // One process loads and maintains (its maintainer drops what retention lets go).
    ChildProcess loader(
        tributary_args(db.url(), {"run", "--workers", "1", "--maintainer-lease", "2s", "--maintainer-interval", "1s"}));
    const auto ids = [&] {
        return db.scalar(
            "SELECT concat_ws(' ', min(event_id), max(event_id), count(*), count(DISTINCT event_id)) "
            "FROM tributary.events");
    };
    std::string seen;
    bool done = false;
    for (int wait = 0; wait < 300 && !done; ++wait) {
        use_transaction_ids(db, 20);  // the small partitions fill, end and are sealed
        std::this_thread::sleep_for(200ms);
        seen = ids();
        const auto min = db.scalar("SELECT coalesce(min(event_id), 0) FROM tributary.events");
        const auto max = db.scalar("SELECT coalesce(max(event_id), 0) FROM tributary.events");
        done = std::stoll(max) == total && std::stoll(min) > 1;
    }
    loader.signal(SIGTERM);
    CHECK(loader.wait_for(60s) == 0);
    INFO("events: min max count distinct = " << seen << "\n" << loader.err());
    REQUIRE(done);
    CHECK_THAT(loader.err(), Catch::Contains("retention: dropped partition"));
    // What stays is a run of ids up to the last, each once: nothing lost after the dropped ones,
    // nothing stored twice, whatever the drops did to the log meanwhile.
    const auto min = std::stoll(db.scalar("SELECT min(event_id) FROM tributary.events"));
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == std::to_string(total - min + 1));
    CHECK(db.scalar("SELECT count(DISTINCT event_id) FROM tributary.events") == std::to_string(total - min + 1));
    CHECK(status_by_name(db.url())["by-id"]["cursor"] == total);
}

TEST_CASE(
    "retention: a pushed key posted again after its partition rolled over is stored once; after the "
    "partition was dropped it is stored again",
    "[retention]") {
    TestDatabase db;
    cut_into_small_partitions(db, 4, 50);
    run_tributary(db.url(), {"source", "add", "hook", "--push", "--insecure-no-auth"});
    ChildProcess receiver(tributary_args(db.url(), {"receive", "--listen", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(receiver, R"(receiving webhooks on \S+ \(port (\d+)\))"));
    const auto post = [&] {
        httplib::Client client("127.0.0.1", port);
        client.set_read_timeout(60, 0);
        const auto result = client.Post("/sources/hook/events", R"([{"id": "a"}, {"id": "b"}])", "application/json");
        REQUIRE(result);
        INFO(result->body);
        return nlohmann::json::parse(result->body).at("stored").get<int>();
    };
    CHECK(post() == 2);
    const auto partition = partition_of(db, "hook", "a");
    REQUIRE(partition_of(db, "hook", "b") == partition);
    use_transaction_ids(db, 60);

    CHECK(post() == 0);  // its partition sealed behind the log's end: the keys are known
    CHECK(partitions_holding(db, "hook") == "tributary." + partition);

    run_tributary(db.url(), {"retention", "set", "--keep", "1s"});
    maintain_until(db, gone(partition));
    CHECK(partitions_holding(db, "hook") == "");
    CHECK(post() == 2);  // keys leave with their events
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "2");
    receiver.signal(SIGTERM);
    CHECK(receiver.wait_for(60s) == 0);
}
