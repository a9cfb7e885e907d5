// The log distributed over the workers (issue 29): what `migrate` makes on a coordinator, and
// loading on it: a turn on its source's worker, every event stamped with that worker's
// transaction id.

#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

#include <httplib.h>

#include "citus_cluster.h"
#include "support/child_process.h"
#include "support/source_server.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;

namespace {

std::string file_text(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The Citus group id of the worker that holds source `id`'s shard of the log.
std::string group_of_source(const CitusCluster& cluster, int id) {
    return cluster.scalar(
        "SELECT n.groupid FROM citus_shards s JOIN pg_dist_node n ON n.nodeport = s.nodeport "
        "WHERE s.shardid = get_shard_id_for_distribution_column('tributary.events', " +
        std::to_string(id) + ") LIMIT 1");
}

/// Source 1's shard of the log held against writes on its worker by a prepared transaction, as
/// the maintainer's partition DDL leaves it when its connection is cut after PREPARE: until
/// Citus' recovery (every citus.recover_2pc_interval) or an operator ends it.
class HeldShard {
public:
    explicit HeldShard(const CitusCluster& cluster)
        : log_path_(cluster.log_path(cluster.node_of(1))),
          worker_(cluster.node_url(cluster.node_of(1))),
          shard_(cluster.shard_of(1)),
          guard_{worker_, "tributary_test_ddl"} {
        CitusCluster::exec_on(worker_, "BEGIN; SET LOCAL citus.enable_manual_changes_to_shards = on; LOCK TABLE " +
                                           shard_ + " IN SHARE ROW EXCLUSIVE MODE; PREPARE TRANSACTION '" + guard_.gid +
                                           "'");
        log_start_ = file_text(log_path_).size();
    }
    /// Whether a writer waits for the shard's lock on the worker.
    bool writer_waits() const {
        return CitusCluster::scalar_on(worker_, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = '" +
                                                    shard_ + "'::regclass") != "0";
    }
    /// How many statements the worker cancelled at lock_timeout since the hold began.
    std::size_t lock_timeouts() const {
        return count_of(file_text(log_path_).substr(log_start_), "due to lock timeout");
    }
    void release() const { CitusCluster::exec_on(worker_, "ROLLBACK PREPARED '" + guard_.gid + "'"); }

private:
    std::string log_path_;
    std::string worker_;
    std::string shard_;
    PreparedGuard guard_;
    std::size_t log_start_ = 0;
};

constexpr int kSources = 6;
constexpr int kBacklog = 1200;

}  // namespace

TEST_CASE("migrate on a coordinator distributes the log over the workers", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    const auto migrated = run_tributary(cluster.url(), {"migrate"});
    CHECK(migrated.out.find("applied citus/0001_distributed_log.sql") != std::string::npos);
    CHECK(migrated.err.find("the log is distributed over 2 Citus workers") != std::string::npos);

    // Everything a turn touches is distributed by source and co-located with the log.
    CHECK(
        cluster.scalar("SELECT string_agg(logicalrelid::text, ' ' ORDER BY logicalrelid::text) "
                       "FROM pg_dist_partition WHERE partmethod = 'h' AND colocationid = "
                       "(SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'tributary.events'::regclass) "
                       "AND NOT logicalrelid::regclass::text LIKE 'tributary.events_%'") ==
        "tributary.cursor_rewinds tributary.cursors tributary.event_keys tributary.events tributary.gates "
        "tributary.source_edits tributary.source_errors tributary.source_minutes");
    CHECK(cluster.scalar("SELECT column_to_column_name(logicalrelid, partkey) FROM pg_dist_partition "
                         "WHERE logicalrelid = 'tributary.events'::regclass") == "source_id");
    // Every partition too, and each of them has shards on both workers.
    CHECK(cluster.scalar("SELECT count(*) FROM pg_inherits i WHERE i.inhparent = 'tributary.events'::regclass "
                         "AND NOT EXISTS (SELECT FROM pg_dist_partition p WHERE p.logicalrelid = i.inhrelid)") == "0");
    CHECK(cluster.scalar("SELECT count(DISTINCT nodeport) FROM citus_shards "
                         "WHERE table_name = 'tributary.events'::regclass") == "2");
    // The catalogue is on every node.
    CHECK(cluster.scalar("SELECT string_agg(logicalrelid::text, ' ' ORDER BY logicalrelid::text) "
                         "FROM pg_dist_partition WHERE repmodel = 't'") == "tributary.access_tokens tributary.sources");
    // The loader's functions are delegated by their source.
    CHECK(cluster.scalar(
              "SELECT count(*) FROM pg_dist_object o JOIN pg_proc p ON p.oid = o.objid "
              "WHERE o.classid = 'pg_proc'::regclass AND p.proname LIKE 'loader\\_%' "
              "AND o.distribution_argument_index = 0 AND o.colocationid = "
              "(SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'tributary.events'::regclass)") == "7");
    // Partitions are made ahead on the cluster, and a second migrate has nothing to do.
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.partitions") != "0");
    CHECK(run_tributary(cluster.url(), {"migrate"}).out.find("schema is up to date") != std::string::npos);
    cluster.reset();
}

TEST_CASE("a loader's turns run on their source's worker, in one transaction there", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    const SourceServer server({"--sources", std::to_string(kSources), "--backlog", std::to_string(kBacklog)});
    for (int i = 0; i < kSources; ++i) {
        const auto name = "demo.src-" + std::to_string(i);
        // Batches of 50 and of 500: both are one delegated statement on Citus.
        run_tributary(cluster.url(), {"source", "add", name, "--url", server.events_url(name), "--batch-size",
                                      i % 2 == 0 ? "50" : "500", "--interval-ms", "20"});
    }
    // Two sources keyed by text (loader_append_keyed), read through the styles of two of them.
    run_tributary(cluster.url(), {"source", "add", "style.cursor", "--url", server.style_url("cursor", "demo.src-0"),
                                  "--records", "/data", "--paginate", "cursor", "--next", "/next_cursor", "--key",
                                  "/key", "--payload", "/payload", "--interval-ms", "20"});
    run_tributary(cluster.url(),
                  {"source", "add", "style.page", "--url", server.style_url("page", "demo.src-1"), "--records",
                   "/results", "--paginate", "page", "--key", "/key", "--payload", "/payload", "--interval-ms", "20"});
    const auto log_before = file_text(cluster.log_path("coordinator")).size();
    setenv("PGOPTIONS", "-c citus.log_remote_commands=on -c log_min_messages=notice", 1);
    const auto run = run_tributary(cluster.url(), {"run", "--until-idle", "--no-maintain"});
    unsetenv("PGOPTIONS");
    INFO(run.err);
    // No turn failed or was skipped on the way.
    CHECK(run.err.find(" warning host=") == std::string::npos);
    CHECK(run.err.find(" error host=") == std::string::npos);

    // Everything, once.
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events") == std::to_string((kSources + 2) * kBacklog));
    CHECK(cluster.scalar("SELECT count(*) FROM (SELECT DISTINCT source_id, coalesce(event_key, event_id::text) "
                         "FROM tributary.events) d") == std::to_string((kSources + 2) * kBacklog));
    // Both workers hold sources.
    CHECK(cluster.scalar("SELECT count(DISTINCT nodeport) FROM citus_shards s WHERE s.table_name = "
                         "'tributary.events'::regclass AND s.shardid IN (SELECT "
                         "get_shard_id_for_distribution_column('tributary.events', id) FROM tributary.sources)") ==
          "2");
    // Each event was written on its source's worker: its seq comes from that worker's sequence,
    // which Citus starts at the worker's group id << 48.
    for (int id = 1; id <= kSources + 2; ++id) {
        INFO("source " << id);
        CHECK(cluster.scalar("SELECT string_agg(DISTINCT (seq >> 48)::text, ',') FROM tributary.events "
                             "WHERE source_id = " +
                             std::to_string(id)) == group_of_source(cluster, id));
    }
    // No turn committed in two phases: the coordinator sent the loader's calls whole to the
    // workers, and prepared no transaction after the first of them (before it, `--until-idle`
    // makes idle sources due in one statement over every shard, which does).
    const auto log = file_text(cluster.log_path("coordinator")).substr(log_before);
    const auto first_claim = log.find("FROM tributary.loader_claim(");
    REQUIRE(first_claim != std::string::npos);
    CHECK(log.find("issuing SELECT tributary.loader_append(", first_claim) != std::string::npos);
    CHECK(log.find("PREPARE TRANSACTION", first_claim) == std::string::npos);
    cluster.reset();
}

TEST_CASE("a turn waits for a lock on its worker only lock_timeout, and a stopping loader tries it no more",
          "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    const SourceServer server({"--sources", "2", "--backlog", "300"});
    for (int i = 0; i < 2; ++i) {
        const auto name = "demo.src-" + std::to_string(i);
        run_tributary(cluster.url(), {"source", "add", name, "--url", server.events_url(name), "--interval-ms", "20"});
    }
    const HeldShard held(cluster);
    ChildProcess loader(tributary_args(cluster.url(), {"run", "--no-maintain"}));
    // The turn's call waits on the worker; the loader is asked to stop meanwhile.
    REQUIRE(eventually([&] { return held.writer_waits(); }));
    loader.signal(SIGTERM);
    REQUIRE(loader.wait_for(std::chrono::minutes(1)) == 0);
    INFO(loader.err());
    // The wait ended at the loader's lock_timeout, which the delegated call carries to the
    // worker (not at the coordinator's statement_timeout), and the turn says why.
    CHECK(loader.err().find("source=demo.src-0") != std::string::npos);
    CHECK(loader.err().find("canceling statement due to lock timeout") != std::string::npos);
    // One attempt: a stop ends the retries of a batch that lost a lock wait.
    CHECK(held.lock_timeouts() == 1);

    // Once the prepared transaction is gone, everything loads, once (`--until-idle` counts a
    // source in its failure's backoff as done: run again until it is not).
    held.release();
    CHECK(eventually([&] {
        run_tributary(cluster.url(), {"run", "--until-idle", "--no-maintain"});
        return cluster.scalar("SELECT count(*) FROM tributary.events") == "600";
    }));
    CHECK(cluster.scalar("SELECT count(DISTINCT (source_id, event_id)) FROM tributary.events") == "600");
    cluster.reset();
}

TEST_CASE("every event takes the transaction id of the worker that holds it", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    run_tributary(cluster.url(), {"source", "add", "pub.orders", "--published"});
    // publish runs on the coordinator, in the caller's transaction.
    cluster.exec(
        "BEGIN; SELECT tributary.publish('pub.orders', 'k1', '{\"n\": 1}'); "
        "SELECT tributary.publish('pub.orders', 'k2', '{\"n\": 2}'); COMMIT");
    const int id = std::stoi(cluster.scalar("SELECT id FROM tributary.sources WHERE name = 'pub.orders'"));
    const auto shard = cluster.shard_of(id);
    const auto node = cluster.node_of(id);
    // On the worker, the rows' tx_id is the transaction that wrote them there (its xmin).
    CHECK(CitusCluster::scalar_on(
              cluster.node_url(node),
              "SELECT count(*) FROM " + shard + " WHERE (tx_id::text::bigint % 4294967296)::text = xmin::text") == "2");
    CHECK(CitusCluster::scalar_on(cluster.node_url(node), "SELECT count(DISTINCT tx_id) FROM " + shard) == "1");
    cluster.reset();
}

TEST_CASE("a receiver's group commits store on the workers, stamped with their ids", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    for (const auto* name : {"hooks.a", "hooks.b", "hooks.c", "hooks.d"})
        run_tributary(cluster.url(), {"source", "add", name, "--push", "--insecure-no-auth"});
    ChildProcess receiver(tributary_args(cluster.url(), {"receive", "--listen", "127.0.0.1:0"}));
    const auto port = std::stoi(wait_for_log(receiver, R"(receiving webhooks on \S+ \(port (\d+)\))"));
    httplib::Client client("127.0.0.1", port);
    for (const auto* name : {"hooks.a", "hooks.b", "hooks.c", "hooks.d"})
        for (int i = 0; i < 5; ++i) {
            const auto body = R"({"id": ")" + std::string(name) + "-" + std::to_string(i) + R"("})";
            const auto answer =
                client.Post((std::string("/sources/") + name + "/events").c_str(), body, "application/json");
            REQUIRE(answer);
            CHECK(answer->status == 201);
        }
    // A delivery again stores nothing.
    CHECK(client.Post("/sources/hooks.a/events", R"({"id": "hooks.a-0"})", "application/json")->status == 200);
    receiver.signal(SIGTERM);
    receiver.wait_for(std::chrono::seconds(10));
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events") == "20");
    // On each worker, each row's tx_id is the worker's transaction that wrote it.
    for (const auto* node : {"worker1", "worker2"}) {
        INFO(node);
        CHECK(CitusCluster::scalar_on(cluster.node_url(node),
                                      "SELECT count(*) FROM tributary.events WHERE (tx_id::text::bigint % 4294967296)"
                                      "::text <> xmin::text") == "0");
    }
    cluster.reset();
}

TEST_CASE(
    "a receiver's commit waits for a lock on a worker only lock_timeout, and a stopping receiver tries it "
    "no more",
    "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    run_tributary(cluster.url(), {"source", "add", "hooks.a", "--push", "--insecure-no-auth"});
    const HeldShard held(cluster);
    const auto log_before = file_text(cluster.log_path("coordinator")).size();
    ChildProcess receiver(tributary_args(cluster.url(), {"receive", "--listen", "127.0.0.1:0"}),
                          {"PGOPTIONS=-c citus.log_remote_commands=on -c log_min_messages=notice"});
    const auto port = std::stoi(wait_for_log(receiver, R"(receiving webhooks on \S+ \(port (\d+)\))"));
    int answered = 0;
    std::thread sender([&] {
        httplib::Client client("127.0.0.1", port);
        client.set_read_timeout(120, 0);
        const auto answer = client.Post("/sources/hooks.a/events", R"({"id": "a-1"})", "application/json");
        answered = answer ? answer->status : -1;
    });
    // The group commit waits on the worker; the receiver is asked to stop meanwhile.
    REQUIRE(eventually([&] { return held.writer_waits(); }));
    receiver.signal(SIGTERM);
    const auto code = receiver.wait_for(std::chrono::minutes(1));
    sender.join();
    INFO(receiver.err());
    CHECK(code == 0);
    // Refused at the lock_timeout the commit carries to the worker, once: the sender may retry.
    CHECK(answered == 503);
    CHECK(receiver.err().find("canceling statement due to lock timeout") != std::string::npos);
    CHECK(held.lock_timeouts() == 1);
    // Both settings went with the worker's BEGIN: its commit is synchronous too.
    std::istringstream log(file_text(cluster.log_path("coordinator")).substr(log_before));
    bool sent = false;
    for (std::string line; std::getline(log, line);)
        sent = sent || (line.find("issuing BEGIN") != std::string::npos &&
                        line.find("SET LOCAL lock_timeout = '5s'") != std::string::npos &&
                        line.find("SET LOCAL synchronous_commit = on") != std::string::npos);
    CHECK(sent);

    // The retry, once the prepared transaction is gone, stores the event once.
    held.release();
    ChildProcess again(tributary_args(cluster.url(), {"receive", "--listen", "127.0.0.1:0"}));
    const auto again_port = std::stoi(wait_for_log(again, R"(receiving webhooks on \S+ \(port (\d+)\))"));
    httplib::Client client("127.0.0.1", again_port);
    const auto retried = client.Post("/sources/hooks.a/events", R"({"id": "a-1"})", "application/json");
    REQUIRE(retried);
    CHECK(retried->status == 201);
    again.signal(SIGTERM);
    again.wait_for(std::chrono::seconds(10));
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events") == "1");
    cluster.reset();
}

TEST_CASE("an OAuth2 source shares its token through the reference table on the cluster", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    const SourceServer server({"--sources", "1", "--prefix", "oa.", "--backlog", "200", "--oauth-client", "id:secret"});
    run_tributary(cluster.url(), {"source",
                                  "add",
                                  "oauth",
                                  "--url",
                                  server.style_url("cursor", "oa.0"),
                                  "--records",
                                  "/data",
                                  "--key",
                                  "/key",
                                  "--payload",
                                  "/payload",
                                  "--paginate",
                                  "cursor",
                                  "--next",
                                  "/next_cursor",
                                  "--interval-ms",
                                  "20",
                                  "--oauth2-token-url",
                                  server.base_url() + "/oauth/token",
                                  "--client-id-env",
                                  "CLIENT_ID",
                                  "--client-secret-env",
                                  "CLIENT_SECRET"});
    setenv("CLIENT_ID", "id", 1);
    setenv("CLIENT_SECRET", "secret", 1);
    const auto run = run_tributary(cluster.url(), {"run", "--until-idle", "--no-maintain", "--workers", "2"});
    unsetenv("CLIENT_ID");
    unsetenv("CLIENT_SECRET");
    INFO(run.err);
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events") == "200");
    CHECK(server.stats()["oauth"]["tokens_issued"] == 1);
    cluster.reset();
}

TEST_CASE("the source commands work on the cluster", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    run_tributary(cluster.url(), {"migrate"});
    const SourceServer server({"--sources", "1", "--backlog", "300"});
    run_tributary(cluster.url(),
                  {"source", "add", "demo.src-0", "--url", server.events_url("demo.src-0"), "--interval-ms", "20"});
    run_tributary(cluster.url(), {"source", "add", "pub.kept", "--published"});
    run_tributary(cluster.url(), {"source", "add", "pub.gone", "--published"});
    run_tributary(cluster.url(), {"run", "--until-idle", "--no-maintain"});
    cluster.exec("SELECT tributary.publish('pub.kept', 'k1', '{}')");

    run_tributary(cluster.url(), {"source", "pause", "demo.src-0"});
    run_tributary(cluster.url(), {"source", "resume", "demo.src-0"});
    CHECK(run_tributary(cluster.url(), {"source", "edit", "demo.src-0", "--batch-size", "50"}).out.find("revision") !=
          std::string::npos);
    run_tributary(cluster.url(), {"source", "rewind", "demo.src-0", "--to", "100"});
    CHECK(cluster.scalar("SELECT last_event_id FROM tributary.cursors") == "100");
    run_tributary(cluster.url(), {"retention", "set", "demo.*", "--keep", "7d"});
    const auto status = status_by_name(cluster.url());
    CHECK(status["demo.src-0"]["state"] == "ok");
    CHECK(status["pub.kept"]["state"] == "published");
    // The rewound source reads again and stores nothing twice.
    run_tributary(cluster.url(), {"run", "--until-idle", "--no-maintain"});
    CHECK(cluster.scalar("SELECT count(*) FROM tributary.events WHERE event_id IS NOT NULL") == "300");

    const auto refused = run_tributary(cluster.url(), {"source", "remove", "pub.kept"}, 1);
    CHECK(refused.err.find("has stored events, and tributary never deletes events") != std::string::npos);
    run_tributary(cluster.url(), {"source", "remove", "pub.gone"});
    CHECK(cluster.scalar("SELECT string_agg(name, ',' ORDER BY name) FROM tributary.sources") == "demo.src-0,pub.kept");
    cluster.reset();
}

TEST_CASE("an installation with events made on one PostgreSQL is left as it is when Citus comes", "[citus]") {
    const CitusCluster cluster;
    cluster.exec("DROP DATABASE IF EXISTS tributary_plain");
    cluster.exec("CREATE DATABASE tributary_plain");
    auto plain = cluster.url();
    plain.replace(plain.rfind("/tributary"), std::string("/tributary").size(), "/tributary_plain");
    run_tributary(plain, {"migrate"});
    run_tributary(plain, {"source", "add", "pub.orders", "--published"});
    CitusCluster::exec_on(plain, "SELECT tributary.publish('pub.orders', 'k1', '{}')");
    CitusCluster::exec_on(plain, "CREATE EXTENSION citus");

    const auto migrated = run_tributary(plain, {"migrate"});
    CHECK(migrated.err.find("its log already holds events stored on the coordinator alone") != std::string::npos);
    CHECK(CitusCluster::scalar_on(plain, "SELECT count(*) FROM pg_dist_partition") == "0");
    // It still works as it did, and says so at every migrate.
    CHECK(CitusCluster::scalar_on(plain, "SELECT count(*) FROM tributary.events") == "1");
    CHECK(run_tributary(plain, {"migrate"}).err.find("left there") != std::string::npos);
    cluster.exec("DROP DATABASE tributary_plain WITH (FORCE)");
}
