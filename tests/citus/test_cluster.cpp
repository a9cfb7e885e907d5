// The cluster scripts/citus-tmp starts (what tributary does on it: test_distributed_log.cpp).

#include <catch2/catch.hpp>

#include <string>

#include "citus_cluster.h"

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
