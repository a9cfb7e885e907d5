// The cluster scripts/citus-tmp starts, and what tributary does on it today (issue 29 builds
// the distributed installation: these tests then change with it).

#include <catch2/catch.hpp>

#include <string>

#include "citus_cluster.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;

TEST_CASE("the cluster: a coordinator and two active workers of Citus 13.2", "[citus]") {
    const CitusCluster cluster;
    CHECK(cluster.scalar("SELECT count(*) FROM pg_dist_node WHERE groupid > 0 AND isactive AND noderole = 'primary'") ==
          "2");
    CHECK(cluster.scalar("SELECT extversion FROM pg_extension WHERE extname = 'citus'").rfind("13.2", 0) == 0);
    for (const auto* worker : {"worker1", "worker2"}) {
        INFO(worker);
        CHECK(CitusCluster::scalar_on(cluster.node_url(worker),
                                      "SELECT count(*) FROM pg_extension WHERE extname = 'citus'") == "1");
    }
    // A distributed table's shards land on both workers.
    cluster.exec("DROP TABLE IF EXISTS public.probe; CREATE TABLE public.probe (k int PRIMARY KEY)");
    cluster.exec("SELECT create_distributed_table('public.probe', 'k')");
    CHECK(cluster.scalar(
              "SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'public.probe'::regclass") == "2");
    cluster.exec("DROP TABLE public.probe");
}

TEST_CASE("migrate on a coordinator makes tributary on that node alone, and says so", "[citus]") {
    const CitusCluster cluster;
    cluster.reset();
    const auto migrated = run_tributary(cluster.url(), {"migrate"});
    CHECK(migrated.err.find("this database has the Citus extension: tributary's tables are made on this node alone") !=
          std::string::npos);
    CHECK(cluster.scalar("SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::text LIKE 'tributary.%'") == "0");

    // It is one PostgreSQL's tributary there: published, read by a group, once.
    run_tributary(cluster.url(), {"source", "add", "pub.orders", "--published"});
    run_tributary(cluster.url(), {"group", "create", "g", "--from", "beginning"});
    cluster.exec("SELECT tributary.publish('pub.orders', 'k1', '{\"n\": 1}')");
    const auto events = cluster.scalar("SELECT events FROM tributary.consumer_next('g', 'c', 10, NULL, NULL)");
    CHECK(events.find("\"event_key\":\"k1\"") != std::string::npos);
    CHECK(cluster.scalar("SELECT events FROM tributary.consumer_next('g', 'c', 10, NULL, NULL)") == "[]");
    cluster.reset();
}
