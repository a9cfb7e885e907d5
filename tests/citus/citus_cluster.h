#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <utility>

namespace tributary::testing {

/// The Citus cluster scripts/test started (scripts/citus-tmp): its coordinator's database
/// "tributary", and where its nodes live.
class CitusCluster {
public:
    /// From TRIBUTARY_TEST_CITUS_URL, TRIBUTARY_TEST_CITUS_DIR and TRIBUTARY_CITUS_TMP.
    CitusCluster();

    const std::string& url() const { return url_; }
    /// The URL of node "coordinator", "worker1" or "worker2" (scripts/citus-tmp url).
    std::string node_url(const std::string& node) const;

    /// The server log of node "coordinator", "worker1" or "worker2" (a scripts/pg-tmp directory's).
    std::string log_path(const std::string& node) const { return dir_ + "/" + node + "/log"; }

    /// Stops node "worker1" or "worker2" (fast), keeping it, until up() (scripts/citus-tmp down).
    void down(const std::string& node) const;
    /// Starts a node down() stopped, and waits until it is ready.
    void up(const std::string& node) const;

    /// Removes what a test left: tributary's schema (distributed tables too) on the coordinator.
    void reset() const;

    void exec(const std::string& sql) const { exec_on(url_, sql); }
    static void exec_on(const std::string& url, const std::string& sql);
    /// The first column of the first row, as text ("" for NULL).
    std::string scalar(const std::string& sql) const { return scalar_on(url_, sql); }
    static std::string scalar_on(const std::string& url, const std::string& sql);

    /// The table on its worker of the events shard that holds source `source`.
    std::string shard_of(int source) const;
    /// The worker ("worker1" or "worker2") that holds source `source`'s shard.
    std::string node_of(int source) const;
    /// "host:port" of node "worker1" or "worker2", as pg_dist_node names it.
    std::string address_of(const std::string& node) const;

private:
    std::string url_;
    std::string dir_;
    std::string citus_tmp_;
};

/// A node down for a part of a test: up again when it ends, a failed check's included.
class NodeOutage {
public:
    NodeOutage(const CitusCluster& cluster, std::string node) : cluster_(cluster), node_(std::move(node)) {
        cluster_.down(node_);
    }
    ~NodeOutage() {
        try {
            end();
        } catch (...) {
        }
    }
    NodeOutage(const NodeOutage&) = delete;
    NodeOutage& operator=(const NodeOutage&) = delete;
    void end() {
        if (!ended_) cluster_.up(node_);
        ended_ = true;
    }

private:
    const CitusCluster& cluster_;
    std::string node_;
    bool ended_ = false;
};

/// Rolls back a test's prepared transaction `gid` on the worker at `worker_url` if it is still
/// there: a failed check must not leave it holding the shard's locks for the tests after.
struct PreparedGuard {
    std::string worker_url;
    std::string gid;
    ~PreparedGuard();
};

/// How many times `what` occurs in `text`, none overlapping.
inline std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

/// Polls `ready` until it holds: a minute at most, so that a broken case fails instead of hanging.
template <typename Ready>
bool eventually(Ready ready) {
    for (int i = 0; i < 600; ++i) {
        if (ready()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

}  // namespace tributary::testing
