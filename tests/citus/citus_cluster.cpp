#include "citus_cluster.h"

#include <cstdlib>
#include <stdexcept>

#include <pqxx/pqxx>

#include "support/child_process.h"

namespace tributary::testing {

namespace {

std::string required_env(const char* name) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') throw std::runtime_error(std::string(name) + " is not set");
    return value;
}

}  // namespace

CitusCluster::CitusCluster()
    : url_(required_env("TRIBUTARY_TEST_CITUS_URL")),
      dir_(required_env("TRIBUTARY_TEST_CITUS_DIR")),
      citus_tmp_(required_env("TRIBUTARY_CITUS_TMP")) {}

std::string CitusCluster::node_url(const std::string& node) const {
    const auto done = run_program({citus_tmp_, "url", dir_, node});
    if (done.code != 0) throw std::runtime_error("citus-tmp url " + node + " failed: " + done.err);
    return done.out.substr(0, done.out.find('\n'));
}

void CitusCluster::down(const std::string& node) const {
    const auto done = run_program({citus_tmp_, "down", dir_, node});
    if (done.code != 0) throw std::runtime_error("citus-tmp down " + node + " failed: " + done.err);
}

void CitusCluster::up(const std::string& node) const {
    const auto done = run_program({citus_tmp_, "up", dir_, node});
    if (done.code != 0) throw std::runtime_error("citus-tmp up " + node + " failed: " + done.err);
}

void CitusCluster::reset() const { exec("DROP SCHEMA IF EXISTS tributary CASCADE"); }

void CitusCluster::exec_on(const std::string& url, const std::string& sql) {
    pqxx::connection connection(url);
    pqxx::nontransaction tx(connection);
    tx.exec(sql);
}

std::string CitusCluster::scalar_on(const std::string& url, const std::string& sql) {
    pqxx::connection connection(url);
    pqxx::nontransaction tx(connection);
    const auto value = tx.exec1(sql)[0];
    return value.is_null() ? "" : value.as<std::string>();
}

std::string CitusCluster::shard_of(int source) const {
    return scalar(
        "SELECT shard_name FROM citus_shards WHERE shardid = "
        "get_shard_id_for_distribution_column('tributary.events', " +
        std::to_string(source) + ") LIMIT 1");
}

std::string CitusCluster::node_of(int source) const {
    const auto port = scalar(
        "SELECT nodeport FROM citus_shards WHERE shardid = "
        "get_shard_id_for_distribution_column('tributary.events', " +
        std::to_string(source) + ") LIMIT 1");
    return node_url("worker1").find(":" + port + "/") != std::string::npos ? "worker1" : "worker2";
}

std::string CitusCluster::address_of(const std::string& node) const {
    const auto port = scalar_on(node_url(node), "SHOW port");
    return scalar("SELECT nodename || ':' || nodeport FROM pg_dist_node WHERE nodeport = " + port);
}

PreparedGuard::~PreparedGuard() {
    try {
        if (CitusCluster::scalar_on(worker_url, "SELECT count(*) FROM pg_prepared_xacts WHERE gid = '" + gid + "'") !=
            "0")
            CitusCluster::exec_on(worker_url, "ROLLBACK PREPARED '" + gid + "'");
    } catch (...) {
    }
}

}  // namespace tributary::testing
