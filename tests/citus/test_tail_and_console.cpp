// Reading the distributed log without a group (issue 29): `tail` and the console's live tail read
// it lane by lane, each lane after its worker's watermark; the console's overview and groups
// count each group lane by lane on the workers.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "citus_cluster.h"
#include "support/child_process.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kSources = 8;

/// Sources pub.s1..pub.sN, published (ids 1..N).
void add_sources(const CitusCluster& cluster, int count) {
    for (int i = 1; i <= count; ++i)
        run_tributary(cluster.url(), {"source", "add", "pub.s" + std::to_string(i), "--published"});
}

/// `per_source` events on each of the first `count` sources, keyed <prefix><n>, payload
/// first + n - 1.
void publish_each(const CitusCluster& cluster, int count, int per_source, const std::string& prefix, int first = 1) {
    for (int i = 1; i <= count; ++i)
        cluster.exec("SELECT tributary.publish('pub.s" + std::to_string(i) +
                     "', (SELECT jsonb_agg(jsonb_build_object('key', '" + prefix + "' || n, 'payload', n + " +
                     std::to_string(first - 1) + ")) FROM generate_series(1, " + std::to_string(per_source) + ") n))");
}

/// How many workers hold the shards of sources 1..count.
std::string workers_of_sources(const CitusCluster& cluster, int count) {
    return cluster.scalar(
        "SELECT count(DISTINCT nodeport) FROM citus_shards WHERE shardid IN (SELECT "
        "get_shard_id_for_distribution_column('tributary.events', i) FROM generate_series(1, " +
        std::to_string(count) + ") i)");
}

std::vector<nlohmann::json> ndjson(const std::string& text) {
    std::vector<nlohmann::json> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
    return lines;
}

/// Whether each source's events come in the order of their payloads (n), and each key once.
bool once_each_in_order(const std::vector<nlohmann::json>& events) {
    std::map<std::string, long long> last;
    std::set<std::string> seen;
    for (const auto& event : events) {
        const auto source = event["source"].get<std::string>();
        if (!seen.insert(source + "/" + event["event_key"].get<std::string>()).second) return false;
        if (event["payload"].is_number()) {
            const auto n = event["payload"].get<long long>();
            if (n <= last[source]) return false;
            last[source] = n;
        }
    }
    return true;
}

/// Waits until the child's stdout holds `lines` lines (or `longest` passed); returns them.
std::vector<nlohmann::json> wait_for_lines(const ChildProcess& child, std::size_t lines,
                                           std::chrono::seconds longest = 30s) {
    const auto until = std::chrono::steady_clock::now() + longest;
    auto out = ndjson(child.out());
    while (out.size() < lines && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(100ms);
        out = ndjson(child.out());
    }
    return out;
}

/// The events of a live tail's stream (GET /api/tail`query`), read until `events` came: the
/// data of each, and the last id.
struct TailRead {
    std::vector<nlohmann::json> events;
    std::string last_id;
    int status = 0;
};

TailRead read_tail(int port, const std::string& query, std::size_t events, httplib::Headers headers = {}) {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(30, 0);
    std::string received;
    TailRead read;
    client.Get(("/api/tail" + query).c_str(), headers,
               [&](const httplib::Response& response) {
                   read.status = response.status;
                   return true;
               },
               [&](const char* data, std::size_t size) {
                   received.append(data, size);
                   return count_of(received, "\nevent: event\n") < events;
               });
    std::istringstream in(received);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("id: ", 0) == 0) read.last_id = line.substr(4);
        if (line.rfind("data: ", 0) == 0) read.events.push_back(nlohmann::json::parse(line.substr(6)));
    }
    return read;
}

}  // namespace

TEST_CASE("on Citus tail prints every event once, in order per source, lane by lane", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    add_sources(cluster, kSources);
    REQUIRE(workers_of_sources(cluster, kSources) == "2");
    // 1 600 events: more than one read of tail's 1 000, so a lane is cut and taken up again.
    publish_each(cluster, kSources, 200, "k");

    const auto all = ndjson(run_tributary(cluster.url(), {"tail"}).out);
    CHECK(all.size() == kSources * 200);
    CHECK(once_each_in_order(all));
    const auto one = ndjson(run_tributary(cluster.url(), {"tail", "--pattern", "pub.s3"}).out);
    CHECK(one.size() == 200);
    CHECK(once_each_in_order(one));
    for (const auto& event : one) CHECK(event["source"] == "pub.s3");
    // Same NDJSON as on one PostgreSQL.
    CHECK(all.front().contains("seq"));
    CHECK(all.front().contains("event_id"));
    CHECK(all.front().contains("loaded_at"));

    // From a time: each lane from its shard's first event loaded at or after it.
    const auto at = cluster.scalar("SELECT clock_timestamp()::text");
    usleep(20'000);  // loaded_at is a transaction's start: the next ones start after `at`
    publish_each(cluster, kSources, 2, "late-");
    const auto late = ndjson(run_tributary(cluster.url(), {"tail", "--from", at}).out);
    CHECK(late.size() == kSources * 2);
    CHECK(once_each_in_order(late));
    for (const auto& event : late) CHECK(event["event_key"].get<std::string>().rfind("late-", 0) == 0);
    const auto refused = run_tributary(cluster.url(), {"tail", "--from", "yesterday-ish"}, 2);
    CHECK_THAT(refused.err, Catch::Contains("--from") && Catch::Contains("invalid position"));
    // read_log itself says where to go.
    try {
        cluster.scalar("SELECT count(*) FROM tributary.read_log('>', NULL, NULL, 10)");
        FAIL("read_log read a distributed log");
    } catch (const std::exception& e) {
        CHECK_THAT(e.what(), Catch::Contains("read_log_lanes"));
    }
    cluster.reset();
}

TEST_CASE("on Citus tail --follow prints what commits later, a worker's prepared write included, once", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    add_sources(cluster, kSources);
    publish_each(cluster, kSources, 1, "a");
    ChildProcess tail(tributary_args(cluster.url(), {"tail", "--follow", "--from", "beginning"}));
    REQUIRE(wait_for_lines(tail, kSources).size() == kSources);

    // A write prepared on source 1's worker, as Citus' two-phase commit leaves it between PREPARE
    // and COMMIT PREPARED; later writes commit meanwhile, on both workers.
    const auto worker = cluster.node_url(cluster.node_of(1));
    const auto group_id = cluster.node_of(1) == "worker1" ? "1" : "2";
    const PreparedGuard guard{worker, "tributary_test_tail_held"};
    CitusCluster::exec_on(worker, "BEGIN; INSERT INTO " + cluster.shard_of(1) +
                                      " (seq, source_id, event_key, payload) VALUES ((" + group_id +
                                      "::bigint << 48) + 999999, 1, 'held', '{}'); PREPARE TRANSACTION "
                                      "'tributary_test_tail_held'");
    publish_each(cluster, kSources, 1, "b", 2);
    // The other worker's sources come (tail follows), source 1's later event does not pass the
    // prepared write: its worker's watermark stays below it.
    std::set<std::string> other_worker;
    for (int i = 2; i <= kSources; ++i)
        if (cluster.node_of(i) != cluster.node_of(1)) other_worker.insert("pub.s" + std::to_string(i));
    REQUIRE(!other_worker.empty());
    const auto before = wait_for_lines(tail, kSources + other_worker.size(), 20s);
    std::this_thread::sleep_for(6s);  // more than --follow's longest wait
    const auto held_back = ndjson(tail.out());
    for (const auto& event : held_back) CHECK((event["source"] != "pub.s1" || event["event_key"] == "a1"));
    CHECK(held_back.size() == kSources + other_worker.size());

    CitusCluster::exec_on(worker, "COMMIT PREPARED 'tributary_test_tail_held'");
    const auto after = wait_for_lines(tail, 2 * kSources + 1);
    tail.signal(SIGTERM);
    CHECK(tail.wait_for(30s) == 0);
    const auto events = ndjson(tail.out());
    CHECK(events.size() == 2 * kSources + 1);
    CHECK(once_each_in_order(events));
    std::vector<std::string> source1;
    for (const auto& event : events)
        if (event["source"] == "pub.s1") source1.push_back(event["event_key"].get<std::string>());
    CHECK(source1 == std::vector<std::string>{"a1", "held", "b1"});
    cluster.reset();
}

TEST_CASE("on Citus the console's overview and groups answer with each group's figures, and its tail streams",
          "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    add_sources(cluster, 6);
    publish_each(cluster, 6, 5, "k");
    run_tributary(cluster.url(), {"group", "create", "all", "--from", "beginning"});
    run_tributary(cluster.url(), {"group", "create", "one", "--pattern", "pub.s2", "--from", "beginning"});
    run_tributary(cluster.url(), {"group", "create", "late", "--from", "end"});
    // A batch in flight: one source's 5 events (a batch is one lane's).
    const auto batch = cluster.scalar("SELECT batch_id FROM tributary.consumer_next('all', 'c1', 100, NULL, NULL)");
    REQUIRE(!batch.empty());
    const auto in_flight =
        std::stoi(cluster.scalar("SELECT cardinality(seqs) FROM tributary.consumer_batches WHERE id = " + batch));

    ChildProcess console(tributary_args(cluster.url(), {"console", "--listen", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(console, R"(console on \S+ \(port (\d+)\))"));
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(30, 0);

    const auto overview = client.Get("/api/overview");
    REQUIRE(overview);
    REQUIRE(overview->status == 200);
    const auto o = nlohmann::json::parse(overview->body);
    CHECK(o["groups"]["total"] == 3);
    CHECK(o["sources"]["total"] == 6);
    std::map<std::string, long long> behind;
    for (const auto& g : o["groups"]["behind"]) behind[g["name"].get<std::string>()] = g["events_behind"];
    CHECK(behind["all"] == 30 - in_flight);
    CHECK(behind["one"] == 5);
    CHECK(behind.count("late") == 0);

    const auto groups = client.Get("/api/groups");
    REQUIRE(groups);
    REQUIRE(groups->status == 200);
    std::map<std::string, nlohmann::json> by_name;
    const auto listed = nlohmann::json::parse(groups->body);
    for (const auto& g : listed["groups"]) by_name[g["name"].get<std::string>()] = g;
    REQUIRE(by_name.size() == 3);
    CHECK(by_name["all"]["events_behind"] == 30 - in_flight);
    CHECK(by_name["all"]["batches_in_flight"] == 1);
    CHECK(by_name["all"]["events_behind_capped"] == false);
    CHECK(by_name["all"]["lanes"] == by_name["one"]["lanes"]);
    CHECK(by_name["one"]["events_behind"] == 5);
    CHECK(by_name["late"]["events_behind"] == 0);
    CHECK(by_name["late"]["batches_in_flight"] == 0);
    long long lanes_behind = 0;
    for (const auto& lane : by_name["all"]["lane_rows"]) lanes_behind += lane["events_behind"].get<long long>();
    CHECK(lanes_behind == 30 - in_flight);
    const auto group = client.Get("/api/groups/one");
    REQUIRE(group);
    CHECK(group->status == 200);
    // A source's page: its last events from its worker, newest first, and its hour per minute.
    const auto source = client.Get("/api/sources/pub.s2");
    REQUIRE(source);
    REQUIRE(source->status == 200);
    const auto page = nlohmann::json::parse(source->body);
    REQUIRE(page["last_events"].size() == 5);
    CHECK(page["last_events"][0]["event_key"] == "k5");
    CHECK(page["last_events"][4]["event_key"] == "k1");
    CHECK(page["per_minute"]["events"].size() == 60);

    // The live tail from the beginning: every event once, each source in order; a reconnect with
    // the last id (a position per lane) gets only what came after.
    const auto tailed = read_tail(port, "?from=beginning&pattern=pub.*", 30);
    CHECK(tailed.status == 200);
    CHECK(tailed.events.size() == 30);
    CHECK(once_each_in_order(tailed.events));
    const auto id_lanes = std::count(tailed.last_id.begin(), tailed.last_id.end(), ',') + 1;
    CHECK(id_lanes == by_name["all"]["lanes"].get<long>());
    cluster.exec("SELECT tributary.publish('pub.s4', 'later', '6')");
    const auto again = read_tail(port, "?pattern=pub.*", 1, {{"Last-Event-ID", tailed.last_id}});
    CHECK(again.status == 200);
    REQUIRE(again.events.size() == 1);
    CHECK(again.events[0]["event_key"] == "later");
    CHECK(again.events[0]["source"] == "pub.s4");
    console.signal(SIGTERM);
    CHECK(console.wait_for(30s) == 0);
    cluster.reset();
}
