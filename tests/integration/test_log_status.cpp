// Observability of the log (issue 16 item 7): `status`, `tributary log`,
// `log partitions` and `group list` name what holds retention back and warn
// about what needs a person; the oldest open transaction shows in status
// and in the metrics; `maintain --metrics-listen` serves the log's gauges.

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "support/consume_rig.h"
#include "support/partitioned_log.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

/// A log with something for every warning but the long transaction: group
/// `slow` has not read the one event of the first small partition (sealed,
/// past a 1 s policy: its end is set an hour back rather than waited for),
/// an event sits in the default partition, a partition's archive failed.
void log_that_needs_a_person(const TestDatabase& db) {
    run_tributary(db.url(), {"source", "add", "p", "--published"});
    run_tributary(db.url(), {"group", "create", "slow", "--from", "beginning"});
    cut_into_small_partitions(db, 3, 50);
    db.exec("SELECT tributary.publish('p', 'k1', '{}')");
    const auto first = db.scalar("SELECT name FROM tributary.partitions ORDER BY from_tx OFFSET 1 LIMIT 1");
    use_transaction_ids(db, 60);  // past the first small partition
    db.exec("SELECT tributary.observe_partitions()");
    REQUIRE(db.scalar("SELECT sealed_at IS NOT NULL FROM tributary.partitions WHERE name = '" + first + "'") == "t");
    db.exec("UPDATE tributary.partitions SET ended_at = now() - interval '1 hour' WHERE sealed_at IS NOT NULL");
    run_tributary(db.url(), {"retention", "set", ">", "--keep", "1s"});
    // Far past every partition: the default partition's.
    db.exec(
        "INSERT INTO tributary.events (source_id, event_id, payload, tx_id) "
        "SELECT id, 99, '{}', '900000000' FROM tributary.sources WHERE name = 'p'");
    db.exec(
        "UPDATE tributary.partitions SET archive_failures = 2, archive_error = 'archive command exited 3', "
        "archive_failed_at = now() WHERE name = 'events_0'");
}

std::string first_held_partition(const TestDatabase& db) {
    return db.scalar("SELECT name FROM tributary.partitions ORDER BY from_tx OFFSET 1 LIMIT 1");
}

int metrics_port(const ChildProcess& child) {
    return std::stoi(wait_for_log(child, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));
}

std::string scrape(int port) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(5, 0);
    const auto res = client.Get("/metrics");
    return res && res->status == 200 ? res->body : "";
}

/// The value of one sample line; -1 when there is none.
double sample(const std::string& text, const std::string& series) {
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
}

/// Scrapes until `series` is above 0 (the refresher's first pass runs as the
/// server starts; before it no gauge has a series); the body then.
std::string scrape_when(int port, const std::string& series) {
    for (int i = 0; i < 200; ++i) {
        auto body = scrape(port);
        if (sample(body, series) > 0) return body;
        std::this_thread::sleep_for(100ms);
    }
    return scrape(port);
}

}  // namespace

TEST_CASE("status, log, log partitions and group list name the group that holds retention back, and warn",
          "[log_status]") {
    TestDatabase db;
    log_that_needs_a_person(db);
    const auto held = first_held_partition(db);

    const auto status = run_tributary(db.url(), {"status"}).out;
    INFO(status);
    CHECK_THAT(status, Catch::Contains("LOG\n"));
    CHECK_THAT(status, Catch::Contains("WARNING: retention held back by group slow (1 partition(s)"));
    CHECK_THAT(status, Catch::Contains("WARNING: 1 event(s) in the default partition"));
    CHECK_THAT(status, Catch::Contains("WARNING: archive failing for 1 partition(s); last events_0: archive command "
                                       "exited 3"));
    CHECK_THAT(status, Catch::Contains("WARNING: no maintainer holds the lease"));
    // No herald is said, not warned: consumers still read everything on their timers.
    CHECK_THAT(status,
               Catch::Contains("herald      none has held the lease yet (consumers wake on their fallback timers)"));
    CHECK_THAT(status, !Catch::Contains("WARNING: no herald"));
    CHECK_THAT(status, Catch::Contains("next drop   events_0"));  // empty and past: due now
    // `status --json` stays the array of sources scripts read.
    CHECK(nlohmann::json::parse(run_tributary(db.url(), {"status", "--json"}).out).is_array());

    const auto log = nlohmann::json::parse(run_tributary(db.url(), {"log", "--json"}).out);
    INFO(log.dump(2));
    CHECK(log["default_partition_events"] == 1);
    CHECK(log["archive_failing"] == 1);
    CHECK(log["archive_failing_partition"] == "events_0");
    REQUIRE(log["retention_held"].size() == 1);
    CHECK(log["retention_held"][0]["group"] == "slow");
    CHECK(log["retention_held"][0]["partitions"] == 1);
    CHECK(log["retention_held"][0]["bytes"].get<long long>() > 0);
    CHECK(log["next_drop"]["partition"] == "events_0");
    CHECK(log["next_drop"]["state"] == "due");
    CHECK(log["oldest_event_at"].is_string());
    CHECK(log["maintainer"]["holds_lease"] == false);
    CHECK(log["herald"]["holds_lease"] == false);
    CHECK(log["herald"]["holder"].is_null());
    CHECK(log["partitions"] == 4);  // events_0 and the three small ones

    const auto partitions = nlohmann::json::parse(run_tributary(db.url(), {"log", "partitions", "--json"}).out);
    INFO(partitions.dump(2));
    REQUIRE(partitions.size() == 5);
    CHECK(partitions[0]["name"] == "events_0");
    CHECK(partitions[0]["state"] == "due");
    CHECK(partitions[0]["archive_failures"] == 2);
    CHECK(partitions[1]["name"] == held);
    CHECK(partitions[1]["state"] == "held");
    CHECK(partitions[1]["held_by"] == nlohmann::json::array({"slow"}));
    CHECK(partitions[1]["sealed_at"].is_string());
    CHECK(partitions[1]["due_at"].is_string());
    CHECK(partitions[2]["state"] == "open");
    CHECK(partitions[4]["name"] == "events_default");
    CHECK(partitions[4]["state"] == "default");
    const auto table = run_tributary(db.url(), {"log", "partitions"}).out;
    CHECK_THAT(table, Catch::Contains(held));
    CHECK_THAT(table, Catch::Contains("slow"));

    const auto groups = nlohmann::json::parse(run_tributary(db.url(), {"group", "list", "--json"}).out);
    REQUIRE(groups.size() == 1);
    CHECK(groups[0]["holds_retention"] == nlohmann::json::array({held}));
    const auto group_table = run_tributary(db.url(), {"group", "list"}).out;
    CHECK_THAT(group_table, Catch::Contains("HELD"));

    // Once the group has read it, nothing holds retention back.
    run_tributary(db.url(), {"group", "reset", "slow", "--to", "end"});
    const auto after = run_tributary(db.url(), {"status"}).out;
    CHECK_THAT(after, !Catch::Contains("retention held back"));
    CHECK(
        nlohmann::json::parse(run_tributary(db.url(), {"group", "list", "--json"}).out)[0]["holds_retention"].empty());
}

TEST_CASE(
    "an open transaction shows in status, log and the metrics; maintain --metrics-listen serves the log's "
    "gauges",
    "[log_status]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "p", "--published"});
    db.exec("SELECT tributary.publish('p', 'k1', '{}')");

    pqxx::connection holder(db.url());
    pqxx::work open(holder);
    const auto pid = open.exec1("SELECT pg_backend_pid()")[0].as<int>();
    open.exec("SELECT pg_current_xact_id()");  // a transaction id: it holds the xmin horizon
    use_transaction_ids(db, 5);

    const auto log = nlohmann::json::parse(run_tributary(db.url(), {"log", "--json"}).out);
    INFO(log.dump(2));
    REQUIRE(log["oldest_transaction"].is_object());
    CHECK(log["oldest_transaction"]["pid"] == pid);
    CHECK(log["oldest_transaction"]["state"] == "idle in transaction");
    CHECK(log["xmin_horizon_lag_xids"].get<double>() >= 5);
    const auto status = run_tributary(db.url(), {"status"}).out;
    CHECK_THAT(status, Catch::Contains("oldest tx   pid " + std::to_string(pid) + " ("));

    ChildProcess maintainer(tributary_args(db.url(), {"maintain", "--metrics-listen", "127.0.0.1:0"}));
    const int port = metrics_port(maintainer);
    // It competes for the lease before its first figures: they say it leads.
    const auto body = scrape_when(port, "tributary_log_partitions");
    INFO(body);
    CHECK(sample(body, "tributary_log_partitions") >= 1);
    CHECK(sample(body, "tributary_log_bytes") > 0);
    CHECK(sample(body, "tributary_log_oldest_event_age_seconds") >= 0);
    CHECK(sample(body, "tributary_log_default_partition_events") == 0);
    CHECK(sample(body, "tributary_log_archive_failing_partitions") == 0);
    CHECK(sample(body, "tributary_oldest_transaction_age_seconds") > 0);
    CHECK(sample(body, "tributary_xmin_horizon_lag_xids") >= 5);
    CHECK(sample(body, "tributary_maintainer_is_leader") == 1);
    // Not known here: no rate measured yet, nothing to drop, no group holding (no series, not a 0).
    CHECK(body.find("tributary_log_ahead_seconds ") == std::string::npos);
    CHECK(body.find("tributary_log_next_drop_seconds ") == std::string::npos);

    const std::string file = "/tmp/tributary-log-metrics-" + std::to_string(::getpid()) + ".txt";
    std::ofstream(file) << body;
    const auto promtool = run_program({"/bin/sh", "-c", "promtool check metrics < " + file});
    INFO(promtool.out << promtool.err);
    CHECK(promtool.code == 0);
    std::remove(file.c_str());

    // Its herald too: `log` names it.
    REQUIRE(wait_until(
        [&] {
            return nlohmann::json::parse(run_tributary(db.url(), {"log", "--json"}).out)["herald"]["holds_lease"] ==
                   true;
        },
        30s));
    CHECK_THAT(run_tributary(db.url(), {"log"}).out, Catch::Contains(", lease expires in "));

    open.abort();
    maintainer.signal(SIGTERM);
    CHECK(maintainer.wait_for(15s) == 0);
}

TEST_CASE("log: partitions past their policy that a group holds back are named in next drop, never 'none past'",
          "[log_status]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "p", "--published"});
    run_tributary(db.url(), {"group", "create", "g1", "--from", "beginning"});
    cut_into_small_partitions(db, 3, 50);
    db.exec("SELECT tributary.publish('p', 'k1', '{}')");
    use_transaction_ids(db, 60);  // past the first small partition
    db.exec("SELECT tributary.observe_partitions()");
    db.exec("UPDATE tributary.partitions SET ended_at = now() - interval '1 hour' WHERE sealed_at IS NOT NULL");
    run_tributary(db.url(), {"retention", "set", ">", "--keep", "1s"});
    // A pass drops what may leave (the empty events_0); g1 has not read k1's partition.
    run_tributary(db.url(), {"maintain", "--once"});
    REQUIRE(db.scalar("SELECT count(*) FROM tributary.partitions WHERE name = 'events_0'") == "0");

    const auto out = run_tributary(db.url(), {"log"}).out;
    INFO(out);
    CHECK_THAT(out, Catch::Contains("WARNING: retention held back by group g1 (1 partition(s)"));
    CHECK_THAT(out, !Catch::Contains("no partition is past its retention policy"));
    CHECK_THAT(out, Catch::Contains("next drop   none until a group lets go: partitions past their policy are held "
                                    "back by g1 (1 partition(s))"));
}

TEST_CASE("on one PostgreSQL the shard commands say there is no shard, and status warns of no lane", "[log_status]") {
    TestDatabase db;
    CHECK_THAT(run_tributary(db.url(), {"shard", "list"}).out, Catch::Contains("the log is not distributed"));
    const auto refused = run_tributary(db.url(), {"shard", "move", "--lane", "0", "--to", "localhost:5432"}, 2);
    CHECK_THAT(refused.err, Catch::Contains("the log is not distributed: there is no shard to move"));
    CHECK(run_tributary(db.url(), {"shard", "move", "--lane", "0", "--to", "nohost"}, 2).err.find("host:port") !=
          std::string::npos);
    CHECK_THAT(run_tributary(db.url(), {"log"}).out, !Catch::Contains("lane"));
}
