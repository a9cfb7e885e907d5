// Moving a shard of the log (issue 29): a shard moved to a worker whose transaction ids are lower
// than its lane's positions would have its next events skipped. `tributary shard move` moves the
// target's counter past the source's first, so nothing is; a move made outside tributary stops
// the lane until `tributary shard adopt`.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "citus_cluster.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;

namespace {

constexpr int kSources = 6;

/// Every event group `group` hands out until a call finds nothing, acknowledged: "source/key".
std::vector<std::string> drain(const CitusCluster& cluster, const std::string& group) {
    std::vector<std::string> events;
    for (;;) {
        const auto row = cluster.scalar(
            "SELECT json_build_object('id', batch_id, 'token', lease_token, 'events', events::json) "
            "FROM tributary.consumer_next('" +
            group + "', 'c', 100, NULL, NULL)");
        const auto batch = row.empty() ? nlohmann::json() : nlohmann::json::parse(row);
        if (batch.is_null() || batch["id"].is_null()) return events;
        for (const auto& event : batch["events"])
            events.push_back(event["source"].get<std::string>() + "/" + event["event_key"].get<std::string>());
        cluster.exec("SELECT tributary.consumer_ack(" + std::to_string(batch["id"].get<long long>()) + ", '" +
                     batch["token"].get<std::string>() + "')");
    }
}

void publish_round(const CitusCluster& cluster, const std::string& key) {
    for (int i = 1; i <= kSources; ++i)
        cluster.exec("SELECT tributary.publish('pub.s" + std::to_string(i) + "', '" + key + "', '{}')");
}

/// A log of kSources published sources on both workers, group "g" from the beginning and read up
/// to now, after source 1's worker used `burn` more transaction ids than the other: source 1's
/// lane's position is then far above the other worker's counter.
void set_up(const CitusCluster& cluster, int burn) {
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    for (int i = 1; i <= kSources; ++i)
        run_tributary(cluster.url(), {"source", "add", "pub.s" + std::to_string(i), "--published"});
    run_tributary(cluster.url(), {"group", "create", "g", "--from", "beginning"});
    publish_round(cluster, "first");
    CitusCluster::exec_on(cluster.node_url(cluster.node_of(1)),
                          "DO $$ BEGIN FOR i IN 1.." + std::to_string(burn) +
                              " LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$");
    CHECK(drain(cluster, "g").size() == kSources);
}

std::string other_worker(const std::string& worker) { return worker == "worker1" ? "worker2" : "worker1"; }

/// Event `key` of pub.s1 stored on its worker in a transaction prepared as `gid`: what a worker
/// holds of a two-phase commit between its PREPARE and COMMIT PREPARED.
void prepare_event(const CitusCluster& cluster, const std::string& key, const std::string& gid) {
    const auto shard = [&](const std::string& table) {
        return cluster.scalar("SELECT shard_name('" + table + "'::regclass, get_shard_id_for_distribution_column('" +
                              table + "', 1))");
    };
    CitusCluster::exec_on(cluster.node_url(cluster.node_of(1)),
                          "BEGIN; SET LOCAL citus.enable_manual_changes_to_shards = on; INSERT INTO " +
                              shard("tributary.event_keys") + " (source_id, event_key) VALUES (1, '" + key +
                              "'); INSERT INTO " + shard("tributary.events") +
                              " (seq, source_id, event_key, payload) VALUES "
                              "(nextval(pg_get_serial_sequence('tributary.events', 'seq')), 1, '" +
                              key + "', '{}'); PREPARE TRANSACTION '" + gid + "'");
}

std::string lane_cursor(const CitusCluster& cluster, const std::string& lane) {
    return cluster.scalar(
        "SELECT l.cursor_tx::text FROM tributary.group_lanes l JOIN tributary.consumer_groups g ON g.id = l.group_id "
        "WHERE g.name = 'g' AND l.lane = " +
        lane);
}

}  // namespace

TEST_CASE("a shard moved by `tributary shard move` is read on its new worker with nothing skipped", "[citus]") {
    const CitusCluster cluster;
    set_up(cluster, 3000);
    const auto lane = cluster.scalar("SELECT tributary.shard_lane(1)");
    const auto from = cluster.node_of(1);
    const auto to = other_worker(from);
    // The danger: the target's next ids are below the lane's position.
    const auto target_next = CitusCluster::scalar_on(cluster.node_url(to), "SELECT pg_current_xact_id()::text");
    CHECK(std::stoll(target_next) < std::stoll(lane_cursor(cluster, lane)));
    const auto tail_from =
        cluster.scalar("SELECT array_agg(tx_id ORDER BY lane)::text FROM tributary.log_lane_positions('end')");

    // While the lane is marked moving, it is not read, though it has events.
    cluster.scalar("SELECT shard_id FROM tributary.shard_move_begin(" + lane + ", split_part('" +
                   cluster.address_of(to) + "', ':', 1), split_part('" + cluster.address_of(to) + "', ':', 2)::int)");
    publish_round(cluster, "during");
    const auto while_moving = drain(cluster, "g");
    for (const auto& event : while_moving) CHECK(event.rfind("pub.s1/", 0) != 0);
    const auto refused = run_tributary(cluster.url(), {"group", "reset", "g", "--to", "end"}, 1);
    CHECK(refused.err.find("is not readable now") != std::string::npos);
    CHECK(run_tributary(cluster.url(), {"shard", "list"}).out.find("moving to") != std::string::npos);

    CHECK(run_tributary(cluster.url(), {"shard", "move", "--lane", lane, "--to", "127.0.0.1:1"}, 2)
              .err.find("is not an active worker of this cluster") != std::string::npos);
    const auto moved = run_tributary(cluster.url(), {"shard", "move", "--lane", lane, "--to", cluster.address_of(to)});
    CHECK(moved.out.find("is read on " + cluster.address_of(to) + " again") != std::string::npos);
    CHECK(cluster.node_of(1) == to);
    CHECK(std::stoll(CitusCluster::scalar_on(cluster.node_url(to), "SELECT pg_current_xact_id()::text")) >
          std::stoll(lane_cursor(cluster, lane)));
    const auto list = run_tributary(cluster.url(), {"shard", "list"}).out;
    CHECK(list.find("moving") == std::string::npos);
    CHECK(list.find("outside") == std::string::npos);

    // Source 1's event stored before the move, then its event stored on the new worker: both, in order.
    publish_round(cluster, "after");
    const auto events = drain(cluster, "g");
    std::vector<std::string> source1;
    for (const auto& event : events)
        if (event.rfind("pub.s1/", 0) == 0) source1.push_back(event);
    CHECK(source1 == std::vector<std::string>{"pub.s1/during", "pub.s1/after"});
    CHECK(while_moving.size() + events.size() == 2 * kSources);

    // tail, from the positions taken before the move: every event after them, once.
    const auto tailed = cluster.scalar(
        "SELECT string_agg(source || '/' || event_key, ',' ORDER BY source, tx_id, seq) FROM "
        "tributary.read_log_lanes('>', '" +
        tail_from +
        "'::xid8[], array_fill(0::bigint, ARRAY[(SELECT count(*)::int FROM tributary.citus_lanes)])) "
        "WHERE source = 'pub.s1'");
    CHECK(tailed == "pub.s1/during,pub.s1/after");
    cluster.reset();
}

TEST_CASE("a shard move that waits past lock_timeout for a writer's transaction is tried again", "[citus]") {
    const CitusCluster cluster;
    set_up(cluster, 0);
    const auto lane = cluster.scalar("SELECT tributary.shard_lane(1)");
    const auto to = other_worker(cluster.node_of(1));

    // A writer's transaction open on the lane's shard holds the lock Citus' move needs.
    pqxx::connection writer(cluster.url());
    pqxx::work open_tx(writer);
    open_tx.exec("SELECT tributary.publish('pub.s1', 'held', '{}')");
    ChildProcess move(tributary_args(cluster.url(), {"shard", "move", "--lane", lane, "--to", cluster.address_of(to)}));
    // Past the session's 5 s lock_timeout the attempt gives up and says so; then the writer commits.
    REQUIRE(eventually([&] { return move.out().find("cannot move now") != std::string::npos; }));
    open_tx.commit();

    REQUIRE(move.wait_for(std::chrono::minutes(1)) == 0);
    const auto out = move.out();
    CHECK(out.find("lock timeout") != std::string::npos);
    CHECK(out.find("is read on " + cluster.address_of(to) + " again") != std::string::npos);
    CHECK(cluster.node_of(1) == to);
    const auto events = drain(cluster, "g");
    CHECK(std::count(events.begin(), events.end(), "pub.s1/held") == 1);
    cluster.reset();
}

TEST_CASE("a shard move settles the two-phase commits left on its worker first, and waits for the others", "[citus]") {
    const CitusCluster cluster;
    set_up(cluster, 0);
    const auto lane = cluster.scalar("SELECT tributary.shard_lane(1)");
    const auto from = cluster.node_url(cluster.node_of(1));
    const auto to = other_worker(cluster.node_of(1));

    // A two-phase commit cut after its PREPARE: the coordinator committed (its record is in
    // pg_dist_transaction), and Citus' recovery would commit the worker's part later, into the
    // placement the move leaves behind, which Citus then drops. Citus' copy does not see it.
    const std::string in_doubt = "citus_0_4000000_999999999_1";
    const PreparedGuard in_doubt_guard{from, in_doubt};
    prepare_event(cluster, "in-doubt", in_doubt);
    cluster.exec(
        "INSERT INTO pg_dist_transaction (groupid, gid) VALUES ((SELECT groupid FROM pg_dist_placement "
        "WHERE shardid = (SELECT shard_id FROM tributary.citus_lanes WHERE lane = " +
        lane + ")), '" + in_doubt + "')");
    // And one that Citus' recovery does not settle (not Citus', or its coordinator's answer not known).
    const PreparedGuard held{from, "tributary_test_held"};
    prepare_event(cluster, "held", held.gid);

    ChildProcess move(tributary_args(cluster.url(), {"shard", "move", "--lane", lane, "--to", cluster.address_of(to)}));
    REQUIRE(eventually([&] { return move.out().find("cannot move now") != std::string::npos; }));
    CHECK(move.out().find("held on " + cluster.address_of(cluster.node_of(1)) +
                          " by prepared transaction(s) tributary_test_held") != std::string::npos);
    // The one in doubt was committed where it was, before any copy.
    CHECK(CitusCluster::scalar_on(from, "SELECT count(*) FROM pg_prepared_xacts WHERE gid = '" + in_doubt + "'") ==
          "0");
    CHECK(cluster.node_of(1) != to);
    CitusCluster::exec_on(from, "COMMIT PREPARED 'tributary_test_held'");

    REQUIRE(move.wait_for(std::chrono::minutes(1)) == 0);
    CHECK(move.out().find("is read on " + cluster.address_of(to) + " again") != std::string::npos);
    CHECK(cluster.node_of(1) == to);
    // Both came with the shard: on its new worker, read once each.
    CHECK(cluster.scalar("SELECT string_agg(event_key, ',' ORDER BY event_key) FROM tributary.events "
                         "WHERE source_id = 1 AND event_key IN ('in-doubt', 'held')") == "held,in-doubt");
    const auto events = drain(cluster, "g");
    CHECK(std::count(events.begin(), events.end(), "pub.s1/in-doubt") == 1);
    CHECK(std::count(events.begin(), events.end(), "pub.s1/held") == 1);
    cluster.reset();
}

TEST_CASE("a shard moved outside tributary is not read until `tributary shard adopt`", "[citus]") {
    const CitusCluster cluster;
    set_up(cluster, 0);
    const auto lane = cluster.scalar("SELECT tributary.shard_lane(1)");
    const auto from = cluster.node_of(1);
    const auto to = other_worker(from);
    // The target ahead, so that what it stores after the move is not behind the lane's position
    // (adopt cannot know: docs/citus.md).
    CitusCluster::exec_on(cluster.node_url(to),
                          "DO $$ BEGIN FOR i IN 1..3000 LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$");
    const auto shard = cluster.scalar("SELECT shard_id FROM tributary.citus_lanes WHERE lane = " + lane);
    cluster.exec("SELECT citus_move_shard_placement(" + shard +
                 ", split_part(a, ':', 1), split_part(a, ':', 2)::int, "
                 "split_part(b, ':', 1), split_part(b, ':', 2)::int, 'block_writes') FROM (VALUES ('" +
                 cluster.address_of(from) + "', '" + cluster.address_of(to) + "')) v(a, b)");
    CHECK(cluster.node_of(1) == to);

    publish_round(cluster, "after");
    for (const auto& event : drain(cluster, "g")) CHECK(event.rfind("pub.s1/", 0) != 0);
    CHECK(run_tributary(cluster.url(), {"shard", "list"}).out.find("moved outside tributary") != std::string::npos);
    const auto refused =
        run_tributary(cluster.url(), {"shard", "move", "--lane", lane, "--to", cluster.address_of(from)}, 1);
    CHECK(refused.err.find("shard adopt") != std::string::npos);

    const auto adopted = run_tributary(cluster.url(), {"shard", "adopt", "--lane", lane});
    CHECK(adopted.out.find("is read on " + cluster.address_of(to)) != std::string::npos);
    const auto events = drain(cluster, "g");
    CHECK(std::count(events.begin(), events.end(), "pub.s1/after") == 1);
    CHECK(run_tributary(cluster.url(), {"shard", "adopt", "--lane", lane}).out.find("nothing to adopt") !=
          std::string::npos);
    cluster.reset();
}
