// Wake-ups on the distributed log (issue 29): the herald keeps one watermark per worker, and
// announces what became readable on any of them, never a write a worker has not made visible
// yet (a prepared two-phase commit); `consume` with an hour's fallback is woken for events
// committed on each worker.

#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <pqxx/pqxx>

#include "citus_cluster.h"
#include "maintenance/lease_store.h"
#include "postgres/postgres_lease_store.h"
#include "postgres/postgres_log_announcer.h"
#include "postgres/postgres_session.h"
#include "support/child_process.h"
#include "support/tributary_cli.h"

using namespace tributary;
using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kSources = 6;

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

/// Adds published sources pub.s1..pub.sN; returns a source id on each worker: {worker1's,
/// worker2's} (0: none there).
std::pair<int, int> published_on_both_workers(const CitusCluster& cluster) {
    for (int i = 1; i <= kSources; ++i)
        run_tributary(cluster.url(), {"source", "add", "pub.s" + std::to_string(i), "--published"});
    int on1 = 0, on2 = 0;
    for (int i = 1; i <= kSources; ++i) (cluster.node_of(i) == "worker1" ? on1 : on2) = i;
    return {on1, on2};
}

void publish(const CitusCluster& cluster, int source, const std::string& key) {
    cluster.exec("SELECT tributary.publish('pub.s" + std::to_string(source) + "', '" + key + "', '{}')");
}

/// Notifications on tributary_events, counted.
struct Listener : pqxx::notification_receiver {
    explicit Listener(pqxx::connection& c) : pqxx::notification_receiver(c, "tributary_events") {}
    void operator()(const std::string& payload, int) override {
        ++heard;
        last = payload;
    }
    int heard = 0;
    std::string last;
};

/// Notifications heard once `at_least` were (or a cap passed), and none more on its way.
int heard(pqxx::connection& c, Listener& l, int at_least) {
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (l.heard < at_least && std::chrono::steady_clock::now() < deadline) c.await_notification(0, 100000);
    c.await_notification(0, 200000);
    return l.heard;
}

}  // namespace

TEST_CASE(
    "on Citus the herald keeps a watermark per worker: it announces events committed on each, "
    "and a prepared write only once committed",
    "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    const auto [on1, on2] = published_on_both_workers(cluster);
    REQUIRE(on1 != 0);
    REQUIRE(on2 != 0);

    postgres::PostgresSession session(cluster.url());
    postgres::PostgresLeaseStore store(session, postgres::Lease::herald);
    postgres::PostgresLogAnnouncer announcer(session);
    CHECK(announcer.log_is_distributed());
    pqxx::connection listening(cluster.url());
    Listener listener(listening);
    const auto token = store.acquire("h", 30s);
    REQUIRE(token);
    const maintenance::MaintainerLease held{"h", *token};

    auto beat = announcer.announce(held, {});
    CHECK(beat.announced);                 // a new tenure
    REQUIRE(beat.watermarks.size() == 2);  // one per worker
    beat = announcer.announce(held, beat.watermarks);
    CHECK_FALSE(beat.announced);
    CHECK(heard(listening, listener, 1) == 1);

    // Committed on each worker: announced, whichever worker it was.
    int notified = 1;
    for (const int source : {on1, on2}) {
        INFO("source " << source << " on " << cluster.node_of(source));
        publish(cluster, source, "k");
        const auto before = beat.watermarks;
        beat = announcer.announce(held, beat.watermarks);
        CHECK(beat.announced);
        ++notified;
        CHECK(heard(listening, listener, notified) == notified);
        // The payload: the workers' watermarks.
        CHECK(listener.last ==
              "{" + std::to_string(beat.watermarks[0]) + "," + std::to_string(beat.watermarks[1]) + "}");
        CHECK_FALSE(announcer.announce(held, beat.watermarks).announced);
    }

    // A write prepared on worker 1's shard (as Citus' two-phase commit leaves it between PREPARE
    // and COMMIT PREPARED), then a committed one behind it: neither is readable, nothing is
    // announced, however often the herald looks.
    const auto worker = cluster.node_url("worker1");
    const PreparedGuard guard{worker, "tributary_wake_held"};
    const auto shard = cluster.scalar(
        "SELECT shard_name FROM citus_shards WHERE shardid = "
        "get_shard_id_for_distribution_column('tributary.events', " +
        std::to_string(on1) + ") LIMIT 1");
    CitusCluster::exec_on(worker, "BEGIN; INSERT INTO " + shard +
                                      " (seq, source_id, event_key, payload) VALUES ((1::bigint << 48) + 999999, " +
                                      std::to_string(on1) +
                                      ", 'held', '{}'); PREPARE TRANSACTION 'tributary_wake_held'");
    beat = announcer.announce(held, beat.watermarks);  // the prepared write may have moved nothing yet
    publish(cluster, on1, "behind");
    for (int i = 0; i < 5; ++i) {
        beat = announcer.announce(held, beat.watermarks);
        CHECK_FALSE(beat.announced);
    }
    CHECK(heard(listening, listener, notified) == notified);

    CitusCluster::exec_on(worker, "COMMIT PREPARED 'tributary_wake_held'");
    beat = announcer.announce(held, beat.watermarks);
    CHECK(beat.announced);
    ++notified;
    CHECK(heard(listening, listener, notified) == notified);

    // Positions of another count of nodes are unknown: announced.
    CHECK(announcer.announce(held, {beat.watermarks[0]}).announced);
    ++notified;
    // Without the lease: nothing.
    cluster.exec("UPDATE tributary.herald_lease SET expires_at = clock_timestamp()");
    publish(cluster, on2, "late");
    CHECK_THROWS_AS(announcer.announce(held, beat.watermarks), maintenance::LeaseLost);
    CHECK(heard(listening, listener, notified) == notified);
    cluster.reset();
}

TEST_CASE("on Citus consume with an hour's fallback is woken by the herald for events on each worker", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    const auto [on1, on2] = published_on_both_workers(cluster);
    REQUIRE(on1 != 0);
    REQUIRE(on2 != 0);
    run_tributary(cluster.url(), {"group", "create", "g", "--from", "beginning"});
    const std::string out = "/tmp/tributary-citus-wake-" + std::to_string(getpid());
    std::remove(out.c_str());
    const auto lines = [&] {
        std::ifstream in(out);
        int n = 0;
        for (std::string line; std::getline(in, line);) ++n;
        return n;
    };
    // The consumer is its own herald (the default); only a hint wakes it once idle.
    ChildProcess consumer(
        tributary_args(cluster.url(), {"consume", "g", "--idle-poll", "1h", "--exec", "cat >> " + out}));
    REQUIRE(wait_for(
        [&] {
            return cluster.scalar("SELECT count(*) FROM tributary.herald_lease WHERE expires_at > clock_timestamp()") !=
                       "0" &&
                   cluster.scalar(
                       "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND query LIKE 'LISTEN%'") != "0";
        },
        30s));
    std::this_thread::sleep_for(500ms);  // its start-up read is over
    int expected = 0;
    for (int round = 0; round < 2; ++round)
        for (const int source : {on1, on2}) {
            INFO("round " << round << ", source " << source << " on " << cluster.node_of(source));
            publish(cluster, source, "r" + std::to_string(round));
            ++expected;
            CHECK(wait_for([&] { return lines() == expected; }, 30s));
        }
    CHECK(consumer.err().find("herald: the log is distributed over Citus: a beat every 50 ms") != std::string::npos);
    consumer.signal(SIGTERM);
    CHECK(consumer.wait_for(15s) == 0);
    std::remove(out.c_str());
    cluster.reset();
}
