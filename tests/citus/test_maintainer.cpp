// The maintainer on the distributed log (issue 29): partitions made ahead of the fastest worker's
// transaction counter, so that no event lands in the default partition; the log's real sizes,
// its shards' on the workers; retention that drops a partition only once every worker is past it
// and every group's lanes have read it, and archives it whole, from every worker, first.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "citus_cluster.h"
#include "support/source_server.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kPublished = 8;
constexpr int kPerSource = 5;

/// The next transaction id of a node.
long long next_xid(const std::string& url) {
    return std::stoll(CitusCluster::scalar_on(url, "SELECT pg_snapshot_xmax(pg_current_snapshot())::text"));
}

/// Moves a node's counter on by `count` ids (empty transactions): a worker busier than the other.
void use_transaction_ids(const std::string& url, long long count) {
    CitusCluster::exec_on(url, "DO $$ BEGIN FOR i IN 1.." + std::to_string(count) +
                                   " LOOP PERFORM set_config('synchronous_commit', 'off', true), "
                                   "pg_current_xact_id(); COMMIT; END LOOP; END $$");
}

/// Published sources pub.0.. (both workers hold some: checked); partitions 1 000 ids wide.
void published_sources(const CitusCluster& cluster) {
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    cluster.exec(
        "UPDATE tributary.log_settings SET partition_span = '1 second', spans_ahead = 2, xids_per_second = 1000, "
        "sampled_at = NULL");
    std::set<std::string> workers;
    for (int i = 0; i < kPublished; ++i) {
        run_tributary(cluster.url(), {"source", "add", "pub." + std::to_string(i), "--published"});
        workers.insert(cluster.node_of(i + 1));
    }
    REQUIRE(workers.size() == 2);
}

void publish_all(const CitusCluster& cluster, const std::string& prefix) {
    for (int i = 0; i < kPublished; ++i)
        cluster.exec("SELECT tributary.publish('pub." + std::to_string(i) + "', '" + prefix + "' || g, '{}') " +
                     "FROM generate_series(1, " + std::to_string(kPerSource) + ") g");
}

std::string maintain_once(const CitusCluster& cluster, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"maintain", "--once"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_tributary(cluster.url(), args).err;
}

/// `maintain --once` pass after pass until `condition` (SQL, boolean) holds; the passes' logs.
std::string maintain_until(const CitusCluster& cluster, const std::string& condition,
                           const std::vector<std::string>& extra = {}) {
    std::string logs;
    for (int pass = 0; pass < 30; ++pass) {
        logs += maintain_once(cluster, extra);
        if (cluster.scalar("SELECT " + condition) == "t") return logs;
        std::this_thread::sleep_for(300ms);
    }
    FAIL("never held: " << condition << "\n" << logs);
    return logs;
}

/// Every event group `group` hands out, each batch acknowledged, until a call finds nothing twice.
std::size_t drain(const CitusCluster& cluster, const std::string& group) {
    std::size_t events = 0;
    for (int idle = 0; idle < 2;) {
        const auto row = cluster.scalar(
            "SELECT json_build_object('id', batch_id, 'token', lease_token, 'events', events::json) "
            "FROM tributary.consumer_next('" +
            group + "', 'c', 100, NULL, NULL)");
        const auto batch = row.empty() ? nlohmann::json() : nlohmann::json::parse(row);
        if (batch.is_null() || batch["id"].is_null()) {
            ++idle;
            continue;
        }
        idle = 0;
        events += batch["events"].size();
        cluster.exec("SELECT tributary.consumer_ack(" + std::to_string(batch["id"].get<long long>()) + ", '" +
                     batch["token"].get<std::string>() + "')");
    }
    return events;
}

/// The partitions of the catalogue that hold events, comma-separated (each counted over its range:
/// a row's tableoid is its worker's shard's), and how many events they hold in all.
std::pair<std::string, long long> partitions_with_events(const CitusCluster& cluster) {
    const auto ranges = cluster.scalar(
        "SELECT string_agg(name || ' ' || from_tx || ' ' || to_tx, ',' ORDER BY from_tx) FROM tributary.partitions");
    std::istringstream in(ranges);
    std::string names;
    long long events = 0;
    for (std::string range; std::getline(in, range, ',');) {
        std::istringstream fields(range);
        std::string name, from, to;
        fields >> name >> from >> to;
        const auto count = std::stoll(cluster.scalar("SELECT count(*) FROM tributary.events WHERE tx_id >= '" + from +
                                                     "' AND tx_id < '" + to + "'"));
        if (count == 0) continue;
        names += (names.empty() ? "" : ",") + name;
        events += count;
    }
    return {names, events};
}

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("on Citus the maintainer makes partitions ahead of the fastest worker: none in the default partition",
          "[citus]") {
    const CitusCluster cluster;
    published_sources(cluster);
    const auto fast = cluster.node_url(cluster.node_of(1));
    const auto slow = cluster.node_url(cluster.node_of(1) == "worker1" ? "worker2" : "worker1");
    // One worker far busier than the other, its counter past every partition `migrate` made
    // (by the coordinator's counter).
    const auto end = std::stoll(cluster.scalar("SELECT max(to_tx)::text FROM tributary.partitions"));
    use_transaction_ids(fast, end - next_xid(fast) + 5000);

    const auto created = maintain_once(cluster);
    CHECK(created.find("created partition") != std::string::npos);
    // Ahead of the fastest worker by the spans ahead (2 of 1 000 ids); the slower one moved into
    // the partition the fastest is in, so that the partitions below can be sealed.
    const auto fast_next = next_xid(fast);
    CHECK(std::stoll(cluster.scalar("SELECT max(to_tx)::text FROM tributary.partitions")) >= fast_next + 2000);
    CHECK(next_xid(slow) >= std::stoll(cluster.scalar("SELECT max(from_tx)::text FROM tributary.partitions "
                                                      "WHERE from_tx <= '" +
                                                      std::to_string(fast_next) + "'")));

    // Loading on both workers, by publishers and by loaders (`run` maintains too), the busy
    // worker moving on meanwhile.
    publish_all(cluster, "a");
    use_transaction_ids(fast, 1500);
    const SourceServer server({"--sources", "4", "--backlog", "300"});
    for (int i = 0; i < 4; ++i) {
        const auto name = "demo.src-" + std::to_string(i);
        run_tributary(cluster.url(), {"source", "add", name, "--url", server.events_url(name), "--batch-size", "50",
                                      "--interval-ms", "20"});
    }
    const auto run = run_tributary(cluster.url(), {"run", "--until-idle"});
    INFO(run.err);
    publish_all(cluster, "b");
    const auto low = std::min(next_xid(fast), next_xid(slow));
    maintain_once(cluster);

    const auto total = std::to_string(2 * kPublished * kPerSource + 4 * 300);
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events") == total);
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events_default") == "0");
    // Every event in a partition of the catalogue.
    const auto [holding, in_partitions] = partitions_with_events(cluster);
    CHECK(std::to_string(in_partitions) == total);
    CHECK(std::stoll(cluster.scalar("SELECT max(to_tx)::text FROM tributary.partitions")) >= next_xid(fast) + 2000);
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.partitions WHERE to_tx <= '" + std::to_string(low) +
                         "' AND ended_at IS NULL") == "0");

    // `log` shows the shards' sizes on the workers, not the coordinator's empty shells.
    const auto first = holding.substr(0, holding.find(','));
    CHECK(cluster.scalar("SELECT bytes = citus_total_relation_size('tributary." + first +
                         "') AND bytes > 4 * pg_total_relation_size('tributary." + first +
                         "') FROM tributary.log_partitions() WHERE name = '" + first + "'") == "t");
    CHECK(cluster.scalar("SELECT bytes = (SELECT sum(citus_total_relation_size(inhrelid)) FROM pg_inherits "
                         "WHERE inhparent = 'tributary.events'::regclass) FROM tributary.log_status()") == "t");
    const auto log = run_tributary(cluster.url(), {"log"});
    CHECK(log.out.find("size") != std::string::npos);
    CHECK(log.out.find("in " + cluster.scalar("SELECT count(*) FROM tributary.partitions") + " partition(s)") !=
          std::string::npos);
    const auto partitions = run_tributary(cluster.url(), {"log", "partitions"});
    CHECK(partitions.out.find(first) != std::string::npos);
    CHECK(partitions.err.find("error") == std::string::npos);
    cluster.reset();
}

TEST_CASE("on Citus retention drops a partition only once every worker and every lane is past it, archived whole",
          "[citus]") {
    const CitusCluster cluster;
    published_sources(cluster);
    const auto one = cluster.node_url("worker1");
    const auto two = cluster.node_url("worker2");
    run_tributary(cluster.url(), {"group", "create", "g", "--from", "beginning"});
    maintain_once(cluster);
    publish_all(cluster, "k");
    const auto events = std::to_string(kPublished * kPerSource);
    const auto holding = partitions_with_events(cluster).first;
    REQUIRE(!holding.empty());
    const auto among = "name = ANY (string_to_array('" + holding + "', ','))";
    const auto all_gone = "NOT EXISTS (SELECT FROM tributary.partitions WHERE " + among + ")";
    const auto state_is = [&](const std::string& state) {
        return "(SELECT bool_and(state = '" + state + "') FROM tributary.partition_retention() WHERE " + among + ")";
    };

    // A transaction of worker 2 still open below the partitions' end: worker 1 moves far past
    // them, worker 2's counter is moved on too, but they are not sealed while it runs.
    pqxx::connection open_on_two(two);
    pqxx::work open_tx(open_on_two);
    open_tx.exec("SELECT pg_current_xact_id()");
    const auto past = std::stoll(cluster.scalar("SELECT max(to_tx)::text FROM tributary.partitions WHERE " + among));
    use_transaction_ids(one, past - next_xid(one) + 500);
    run_tributary(cluster.url(), {"retention", "set", "--keep", "1s", "--archive"});
    char pattern[] = "/tmp/tributary-citus-archive.XXXXXX";
    REQUIRE(mkdtemp(pattern) != nullptr);
    const std::string dir = pattern;
    const std::vector<std::string> archive = {"--archive-command", "cat > " + dir + "/$TRIBUTARY_PARTITION.csv"};
    for (int pass = 0; pass < 3; ++pass) maintain_once(cluster, archive);
    std::this_thread::sleep_for(1200ms);
    maintain_once(cluster, archive);
    CHECK(cluster.scalar(state_is("open")) == "t");
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events") == events);
    open_tx.abort();

    // Sealed, past its policy, but group g has read none of it: held.
    maintain_until(cluster, state_is("held"), archive);
    CHECK_THAT(maintain_once(cluster, archive), Catch::Contains("retention held back by group g"));
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events") == events);
    CHECK(drain(cluster, "g") == kPublished * kPerSource);

    // One lane behind again (its cursor back at the start, on its worker): held again.
    cluster.exec(
        "UPDATE tributary.group_lanes SET cursor_tx = '0', cursor_seq = 0 WHERE lane = tributary.shard_lane(2) "
        "AND group_id = (SELECT id FROM tributary.consumer_groups WHERE name = 'g')");
    maintain_until(cluster, state_is("held"), archive);
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events") == events);
    std::size_t in_lane = 0;
    const auto lane = cluster.scalar("SELECT tributary.shard_lane(2)");
    for (int id = 1; id <= kPublished; ++id)
        if (cluster.scalar("SELECT tributary.shard_lane(" + std::to_string(id) + ")") == lane) in_lane += kPerSource;
    CHECK(drain(cluster, "g") == in_lane);

    // Read by every lane: archived from both workers, then dropped, keys and all.
    const auto dropped = maintain_until(cluster, all_gone, archive);
    CHECK(dropped.find("retention: archived partition") != std::string::npos);
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events") == "0");
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.event_keys") == "0");
    std::size_t rows = 0;
    std::set<std::string> sources;
    std::string from = holding;
    for (std::size_t at = 0; at != std::string::npos;) {
        const auto comma = from.find(',', at);
        const auto name = from.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        std::istringstream csv(file_text(dir + "/" + name + ".csv"));
        std::string line;
        std::getline(csv, line);
        CHECK(line == "seq,source_id,event_id,event_key,tx_id,loaded_at,payload");
        while (std::getline(csv, line)) {
            ++rows;
            const auto a = line.find(',');
            sources.insert(line.substr(a + 1, line.find(',', a + 1) - a - 1));
        }
        at = comma == std::string::npos ? comma : comma + 1;
    }
    CHECK(rows == kPublished * kPerSource);
    CHECK(sources.size() == kPublished);
    std::filesystem::remove_all(dir);
    cluster.reset();
}

TEST_CASE("on Citus log names a worker's open transaction and the oldest prepared one", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    // A transaction open on worker1, holding an id, and a two-phase commit prepared on worker2.
    pqxx::connection holder(cluster.node_url("worker1"));
    pqxx::work open(holder);
    const auto pid = open.exec1("SELECT pg_backend_pid()")[0].as<int>();
    open.exec("SELECT pg_current_xact_id()");
    const PreparedGuard guard{cluster.node_url("worker2"), "tributary_test_status"};
    CitusCluster::exec_on(cluster.node_url("worker2"),
                          "BEGIN; SELECT pg_current_xact_id(); PREPARE TRANSACTION 'tributary_test_status'");
    std::this_thread::sleep_for(1s);  // older than anything the coordinator has open when log looks

    const auto log = nlohmann::json::parse(run_tributary(cluster.url(), {"log", "--json"}).out);
    INFO(log.dump(2));
    REQUIRE(log["oldest_transaction"].is_object());
    CHECK(log["oldest_transaction"]["node"] == cluster.address_of("worker1"));
    CHECK(log["oldest_transaction"]["pid"] == pid);
    CHECK(log["oldest_prepared_transaction"]["gid"] == "tributary_test_status");
    CHECK(log["oldest_prepared_transaction"]["node"] == cluster.address_of("worker2"));
    CHECK(log["xmin_horizon_lag_xids"].get<double>() >= 1);
    CHECK(run_tributary(cluster.url(), {"log"}).out.find("on worker " + cluster.address_of("worker1") + " open") !=
          std::string::npos);
    open.abort();
    CitusCluster::exec_on(cluster.node_url("worker2"), "ROLLBACK PREPARED 'tributary_test_status'");
    cluster.reset();
}
