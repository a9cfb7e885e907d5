#pragma once

// The suite's own PostgreSQL cluster (scripts/pg-tmp), or its own Citus
// cluster of a coordinator and two workers (scripts/citus-tmp), so that
// restarting it never disturbs other tests, and the admin-side faults done
// with SQL.

#include <atomic>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace tributary::crash {

class Cluster {
public:
    /// Starts a fresh cluster in a new directory under /tmp with `tmp_script`:
    /// scripts/pg-tmp, or scripts/citus-tmp when `citus`.
    Cluster(std::string tmp_script, bool citus);
    /// Stops it and removes its directory.
    ~Cluster();
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    int port() const { return port_; }
    bool citus() const { return citus_; }
    /// What a restart may hit: the one server (""), or the coordinator and each worker.
    std::vector<std::string> nodes() const;
    /// Each server's log: (node, path); the node is "" for the one server.
    std::vector<std::pair<std::string, std::string>> server_logs() const;
    /// The database URL on `port` (the cluster's own, or a proxy's) with an
    /// application_name, so that a loader's sessions can be found in
    /// pg_stat_activity whichever way it connects.
    std::string url(const std::string& application_name = "crash-harness", int port = 0) const;

    /// pg-tmp restart DIR fast|immediate (citus-tmp restart DIR NODE ...);
    /// blocks until the server is back.
    void restart(const std::string& mode, const std::string& node = "");

    /// pg_terminate_backend of the sessions holding tributary's advisory
    /// locks: all of them or one at random. Returns how many.
    int terminate_lock_holders(bool all);
    /// Waits (up to `timeout`) for a moment when a session with this
    /// application_name holds one of tributary's advisory locks: the loader is
    /// in the middle of a source's turn. False when none came.
    bool wait_for_lock_held_by(const std::string& application_name, std::chrono::milliseconds timeout) const;
    /// Waits (up to `timeout`) for a moment when a session with this
    /// application_name is running a statement whose text starts with
    /// `statement` (e.g. COMMIT). False when none came.
    bool wait_for_statement(const std::string& application_name, const std::string& statement,
                            std::chrono::milliseconds timeout) const;
    /// pg_terminate_backend of every session with this application_name.
    int terminate_application(const std::string& application_name);

    /// Citus: waits (up to `timeout`) on `worker` for a session whose last
    /// statement is a PREPARE TRANSACTION (the coordinator's two-phase commit,
    /// before its COMMIT PREPARED) and terminates it: the prepared
    /// transaction stays, for Citus' recovery to finish. Returns how many.
    int cut_after_prepare(const std::string& worker, std::chrono::milliseconds timeout);
    /// Citus: its recovery of the two-phase commits left in doubt, now rather
    /// than at the coordinator's next citus.recover_2pc_interval. Returns how
    /// many it committed or rolled back.
    int recover_prepared();

    /// Every row of `sql`, each field as text ("NULL" for null); throws on failure.
    std::vector<std::vector<std::string>> query(const std::string& sql) const;

    /// Database outages the harness caused (restarts, proxy refusals) make a
    /// loader that starts meanwhile exit 1 on purpose; these say when.
    /// Extends (never shortens) the window.
    void mark_disturbed(std::chrono::seconds for_how_long);
    bool disturbed_recently() const;

private:
    /// A URL of `node` (citus-tmp url), for the faults done on a worker.
    std::string node_url(const std::string& node) const;

    std::string tmp_script_;
    bool citus_ = false;
    std::string dir_;
    int port_ = 0;
    std::atomic<long long> disturbed_until_ms_{0};
    std::atomic<bool> restarting_{false};
};

}  // namespace tributary::crash
