// Reading the distributed log (issue 29): a group's lanes are the log's shards, each read on its
// worker after that worker's watermark, so no group passes a write a worker has not made
// visible yet, two-phase commits included.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "citus_cluster.h"
#include "support/source_server.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;

namespace {

constexpr int kPublished = 6;

/// One batch of consumer_next for `consumer`, acknowledged at once: its events as JSON.
nlohmann::json next_batch(const CitusCluster& cluster, const std::string& group, const std::string& consumer) {
    const auto row = cluster.scalar(
        "SELECT json_build_object('id', batch_id, 'token', lease_token, 'events', "
        "events::json) FROM tributary.consumer_next('" +
        group + "', '" + consumer + "', 100, NULL, NULL)");
    if (row.empty()) return nlohmann::json::array();
    const auto batch = nlohmann::json::parse(row);
    if (batch["id"].is_null()) return nlohmann::json::array();
    cluster.exec("SELECT tributary.consumer_ack(" + std::to_string(batch["id"].get<long long>()) + ", '" +
                 batch["token"].get<std::string>() + "')");
    return batch["events"];
}

/// Every event the group hands out until a round of both consumers finds nothing.
std::vector<nlohmann::json> drain(const CitusCluster& cluster, const std::string& group) {
    std::vector<nlohmann::json> events;
    for (int idle = 0; idle < 2;) {
        bool any = false;
        for (const auto* consumer : {"c1", "c2"})
            for (const auto& event : next_batch(cluster, group, consumer)) {
                events.push_back(event);
                any = true;
            }
        idle = any ? 0 : idle + 1;
    }
    return events;
}

}  // namespace

TEST_CASE("on Citus a group has a lane per shard, and reads every event once", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    const SourceServer server({"--sources", "6", "--backlog", "700"});
    for (int i = 0; i < 6; ++i) {
        const auto name = "demo.src-" + std::to_string(i);
        run_tributary(cluster.url(), {"source", "add", name, "--url", server.events_url(name), "--batch-size", "500",
                                      "--interval-ms", "20"});
    }
    run_tributary(cluster.url(), {"group", "create", "all", "--from", "beginning"});
    run_tributary(cluster.url(), {"group", "create", "some", "--pattern", "demo.src-1", "--from", "beginning"});
    const auto refused = run_tributary(cluster.url(), {"group", "create", "bad", "--lanes", "4"}, 2);
    CHECK(refused.err.find("on Citus a group has one lane per shard of the log") != std::string::npos);
    CHECK(cluster.scalar("SELECT lanes FROM tributary.consumer_groups WHERE name = 'all'") ==
          cluster.scalar("SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'tributary.events'::regclass"));
    run_tributary(cluster.url(), {"run", "--until-idle", "--no-maintain"});

    const auto events = drain(cluster, "all");
    std::set<std::pair<std::string, long long>> seen;
    std::map<std::string, long long> last;
    bool in_order = true;
    for (const auto& event : events) {
        const auto source = event["source"].get<std::string>();
        const auto id = event["event_id"].get<long long>();
        seen.insert({source, id});
        in_order = in_order && id > last[source];
        last[source] = id;
    }
    CHECK(events.size() == 6 * 700);
    CHECK(seen.size() == 6 * 700);
    CHECK(in_order);
    const auto some = drain(cluster, "some");
    CHECK(some.size() == 700);
    // Nothing is left behind, and status counts by lane on the workers.
    const auto list = run_tributary(cluster.url(), {"group", "list"});
    CHECK(list.out.find("all ") != std::string::npos);
    CHECK(cluster.scalar("SELECT events_behind FROM tributary.group_status_of('all')") == "0");
    cluster.reset();
}

TEST_CASE("a worker's prepared transaction holds its lane back until COMMIT PREPARED", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    for (int i = 1; i <= kPublished; ++i)
        run_tributary(cluster.url(), {"source", "add", "pub.s" + std::to_string(i), "--published"});
    run_tributary(cluster.url(), {"group", "create", "g", "--from", "beginning"});
    for (int i = 1; i <= kPublished; ++i)
        cluster.exec("SELECT tributary.publish('pub.s" + std::to_string(i) + "', 'first', '{}')");
    CHECK(drain(cluster, "g").size() == kPublished);

    // Source 1's shard on its worker: a write prepared there, as Citus' two-phase commit leaves
    // it between PREPARE and COMMIT PREPARED (the coordinator's part may be over already).
    const auto worker = cluster.node_url(cluster.node_of(1));
    const auto group_id = cluster.node_of(1) == "worker1" ? "1" : "2";
    const PreparedGuard guard{worker, "tributary_test_held"};
    CitusCluster::exec_on(worker, "BEGIN; INSERT INTO " + cluster.shard_of(1) +
                                      " (seq, source_id, event_key, payload) VALUES ((" + group_id +
                                      "::bigint << 48) + 999999, 1, 'held', '{}'); PREPARE TRANSACTION "
                                      "'tributary_test_held'");
    const auto held_tx = CitusCluster::scalar_on(worker,
                                                 "SELECT transaction FROM pg_prepared_xacts WHERE gid = "
                                                 "'tributary_test_held'");
    // Writes after it commit, on that worker and on the others.
    for (int i = 1; i <= kPublished; ++i)
        cluster.exec("SELECT tributary.publish('pub.s" + std::to_string(i) + "', 'after', '{}')");

    // The group reads what is visible below each worker's watermark: nothing of source 1's lane
    // past the prepared write, however often it asks.
    std::vector<nlohmann::json> before;
    for (int round = 0; round < 3; ++round)
        for (const auto& event : drain(cluster, "g")) before.push_back(event);
    std::set<std::string> sources_before;
    for (const auto& event : before) sources_before.insert(event["source"].get<std::string>());
    CHECK(sources_before.count("pub.s1") == 0);
    const auto lane = cluster.scalar("SELECT tributary.shard_lane(1)");
    CHECK(cluster.scalar("SELECT l.cursor_tx::text::bigint <= " + held_tx +
                         " FROM tributary.group_lanes l JOIN tributary.consumer_groups g ON g.id = l.group_id "
                         "WHERE g.name = 'g' AND l.lane = " +
                         lane) == "t");

    CitusCluster::exec_on(worker, "COMMIT PREPARED 'tributary_test_held'");
    const auto after = drain(cluster, "g");
    std::vector<std::string> source1;
    for (const auto& event : after)
        if (event["source"] == "pub.s1") source1.push_back(event["event_key"].get<std::string>());
    // Nothing skipped: the held event, then the one written after it.
    CHECK(source1 == std::vector<std::string>{"held", "after"});
    CHECK(before.size() + after.size() == kPublished + 1);
    cluster.reset();
}

TEST_CASE("on Citus a failed event is retried, dead-lettered, listed and replayed", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    run_tributary(cluster.url(), {"source", "add", "pub.orders", "--published"});
    run_tributary(cluster.url(), {"group", "create", "g", "--from", "beginning", "--max-deliveries", "2"});
    cluster.exec("SELECT tributary.publish('pub.orders', 'o1', '{\"n\": 1}')");
    for (int delivery = 1; delivery <= 2; ++delivery) {
        INFO("delivery " << delivery);
        const auto row = cluster.scalar(
            "SELECT batch_id || ' ' || lease_token || ' ' || delivery || ' ' || event_key "
            "FROM tributary.consumer_read('g', 'c1', 10)");
        REQUIRE(row.find(" " + std::to_string(delivery) + " o1") != std::string::npos);
        const auto id = row.substr(0, row.find(' '));
        const auto token = row.substr(id.size() + 1, 36);
        cluster.exec("SELECT tributary.consumer_fail(" + id + ", '" + token + "', 'boom')");
        cluster.exec("UPDATE tributary.consumer_retries SET next_attempt_at = now()");
    }
    const auto listed = run_tributary(cluster.url(), {"dlq", "list", "g"});
    CHECK(listed.out.find("pub.orders") != std::string::npos);
    CHECK(listed.out.find("boom") != std::string::npos);
    CHECK(cluster.scalar("SELECT dead_letters FROM tributary.group_status_of('g')") == "1");
    run_tributary(cluster.url(), {"dlq", "replay", "g", "--all"});
    CHECK(cluster.scalar("SELECT event_key FROM tributary.consumer_read('g', 'c1', 10)") == "o1");
    cluster.reset();
}

TEST_CASE("on Citus consume hands every event once, an ordered group each source in order", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    for (int i = 1; i <= kPublished; ++i)
        run_tributary(cluster.url(), {"source", "add", "pub.s" + std::to_string(i), "--published"});
    run_tributary(cluster.url(), {"group", "create", "o", "--from", "beginning", "--ordered"});
    for (int i = 1; i <= kPublished; ++i)
        cluster.exec("SELECT tributary.publish('pub.s" + std::to_string(i) +
                     "', (SELECT jsonb_agg(jsonb_build_object('key', 'k' || n, 'payload', n)) "
                     "FROM generate_series(1, 40) n))");
    const std::string out = "/tmp/tributary-citus-consume-" + std::to_string(getpid());
    std::remove(out.c_str());
    run_tributary(cluster.url(), {"consume", "o", "--until-idle", "--batch", "25", "--exec", "cat >> " + out});
    std::ifstream in(out);
    std::map<std::string, long long> last;
    std::set<std::string> seen;
    bool in_order = true;
    int lines = 0;
    for (std::string line; std::getline(in, line); ++lines) {
        const auto event = nlohmann::json::parse(line);
        const auto source = event["source"].get<std::string>();
        const auto n = event["payload"].get<long long>();
        seen.insert(source + "/" + event["event_key"].get<std::string>());
        in_order = in_order && n > last[source];
        last[source] = n;
    }
    std::remove(out.c_str());
    CHECK(lines == kPublished * 40);
    CHECK(seen.size() == static_cast<std::size_t>(kPublished * 40));
    CHECK(in_order);
    cluster.reset();
}

TEST_CASE("on Citus a group starts at a time, and is reset to one, lane by lane", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    // Published sources on both workers: 8 of them, 5 events before the time and 3 after.
    std::vector<std::string> names;
    for (int i = 0; i < 8; ++i) {
        names.push_back("pub.s" + std::to_string(i));
        run_tributary(cluster.url(), {"source", "add", names.back(), "--published"});
    }
    const auto publish = [&](const std::string& prefix, int count) {
        for (const auto& name : names)
            for (int k = 0; k < count; ++k)
                cluster.exec("SELECT tributary.publish('" + name + "', '" + prefix + std::to_string(k) + "', '{}')");
    };
    publish("before-", 5);
    std::set<std::string> nodes;
    for (const auto& name : names)
        nodes.insert(
            cluster.node_of(std::stoi(cluster.scalar("SELECT id FROM tributary.sources WHERE name = '" + name + "'"))));
    REQUIRE(nodes.size() == 2);
    const auto at = cluster.scalar("SELECT clock_timestamp()::text");
    usleep(20'000);  // loaded_at is a transaction's start: the next ones start after `at`
    publish("after-", 3);

    const auto keys_after = [&](const std::string& group) {
        std::set<std::string> keys;
        for (const auto& event : drain(cluster, group)) {
            CHECK(event["event_key"].get<std::string>().rfind("after-", 0) == 0);
            keys.insert(event["source"].get<std::string>() + "/" + event["event_key"].get<std::string>());
        }
        return keys;
    };
    run_tributary(cluster.url(), {"group", "create", "since", "--from", at});
    CHECK(keys_after("since").size() == names.size() * 3);

    // From the beginning, then back to the time: the same three per source again.
    run_tributary(cluster.url(), {"group", "create", "again", "--from", "beginning"});
    CHECK(drain(cluster, "again").size() == names.size() * 8);
    run_tributary(cluster.url(), {"group", "reset", "again", "--to", at});
    CHECK(keys_after("again").size() == names.size() * 3);

    const auto bad = run_tributary(cluster.url(), {"group", "create", "bad", "--from", "yesterday-ish"}, 2);
    CHECK(bad.err.find("invalid position") != std::string::npos);
    cluster.reset();
}
