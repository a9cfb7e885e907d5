#pragma once

// The suite's own PostgreSQL cluster (scripts/pg-tmp), so that restarting it
// never disturbs other tests, and the admin-side faults done with SQL.

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

namespace tributary::crash {

class Cluster {
public:
    /// Starts a fresh cluster in a new directory under /tmp.
    explicit Cluster(std::string pg_tmp);
    /// Stops it and removes its directory.
    ~Cluster();
    Cluster(const Cluster&) = delete;
    Cluster& operator=(const Cluster&) = delete;

    int port() const { return port_; }
    const std::string& dir() const { return dir_; }
    /// The database URL on `port` (the cluster's own, or a proxy's) with an
    /// application_name, so that a loader's sessions can be found in
    /// pg_stat_activity whichever way it connects.
    std::string url(const std::string& application_name = "crash-harness", int port = 0) const;

    /// pg-tmp restart DIR fast|immediate; blocks until the server is back.
    void restart(const std::string& mode);

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

    /// Every row of `sql`, each field as text ("NULL" for null); throws on failure.
    std::vector<std::vector<std::string>> query(const std::string& sql) const;

    /// Database outages the harness caused (restarts, proxy refusals) make a
    /// loader that starts meanwhile exit 1 on purpose; these say when.
    /// Extends (never shortens) the window.
    void mark_disturbed(std::chrono::seconds for_how_long);
    bool disturbed_recently() const;

private:
    std::string pg_tmp_;
    std::string dir_;
    int port_ = 0;
    std::atomic<long long> disturbed_until_ms_{0};
    std::atomic<bool> restarting_{false};
};

}  // namespace tributary::crash
