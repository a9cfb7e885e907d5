#pragma once

// The fault phase: every 1-3 s (seeded, so a run can be replayed) one fault
// from the kinds of issue 3, and the timed actions that undo the ones that
// last a while (SIGCONT, proxy delay off, ...). Counts every fault by kind.

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tributary::crash {

class Cluster;
class HostileEpisodes;
class Proxy;
class Supervisor;
class Tally;

struct SchedulerConfig {
    std::chrono::seconds duration{180};
    unsigned long long seed = 0;
    /// At least this long between two PostgreSQL restarts: each one stalls
    /// every loader for a few seconds.
    std::chrono::seconds restart_gap{25};
    /// No hostile mode with a long (30-60 s) backoff this close to the end,
    /// so that the drain does not wait on one.
    std::chrono::seconds long_backoff_quiet{45};
    /// Hostile episodes begin only in every other window of this length, so
    /// that the monitor sees the healthy sources both with and without a
    /// hostile one failing beside them.
    std::chrono::seconds hostile_window{30};
    /// The live consumers' records, where a SIGSTOPped consumer's batches in hand are noted.
    std::string consumer_record_dir;
    /// The tributary binary, for `tributary shard move` (Citus).
    std::string tributary;
};

class Scheduler {
public:
    /// `receivers` (the webhook receivers' supervisor) may be null: no pushed sources;
    /// `consumers` (the live group's consumers') likewise: no consumers during the faults.
    Scheduler(SchedulerConfig config, Supervisor& supervisor, Supervisor* receivers, Supervisor* consumers,
              Cluster& cluster, Proxy* proxy, HostileEpisodes& hostile, Tally& tally);

    /// Injects faults until the duration is over, then heals everything:
    /// loaders and consumers resumed, proxy faults off, hostile sources back to none.
    void run();

private:
    enum class Kind {
        kill9,
        pause,
        terminate_lock_holders,
        pg_restart,
        proxy_cut,
        proxy_cut_after_commit,
        proxy_delay,
        proxy_outage,
        proxy_blackhole,
        hostile,
        sigterm,
        kill9_receiver,
        sigterm_receiver,
        terminate_receiver_sessions,
        proxy_cut_after_receiver_commit,
        kill9_receiver_mid_commit,
        kill9_consumer,
        pause_consumer,
        kill9_consumer_mid_read,
        cut_after_prepare,
        shard_move
    };
    struct Pending {
        std::chrono::steady_clock::time_point at;
        std::function<void()> action;
    };

    bool inject(Kind kind);
    bool pause_loader();
    bool restart_database();
    bool cut_after_prepare();
    bool shard_move();
    /// Runs `tributary shard move` for `lane` to `to`; true when it succeeded.
    bool move_lane(const std::string& lane, const std::string& to);
    /// Citus: the two-phase commits left in doubt settled, before the checks.
    void settle_two_phase_commits();
    /// Moves that a fault interrupted (the lane unread until the move ends), finished.
    void finish_shard_moves();
    bool proxy_fault(Kind kind);
    void later(std::chrono::milliseconds delay, std::function<void()> action);
    void run_due(bool all);
    std::chrono::milliseconds between(int min_ms, int max_ms);
    int random_loader();
    /// The loader holding ROLE's lease ("maintainer" or "herald"), if one holds it now.
    std::optional<int> leading_loader(const std::string& role) const;
    /// The maintainer a third of the time and the herald a third (when a loader is), else a random
    /// loader.
    int target_loader();
    bool proxy_quiet() const;
    bool begin_hostile();
    bool receiver_fault(Kind kind);
    bool consumer_fault(Kind kind);

    SchedulerConfig config_;
    Supervisor& supervisor_;
    Supervisor* receivers_;
    Supervisor* consumers_;
    Cluster& cluster_;
    Proxy* proxy_;
    HostileEpisodes& hostile_;
    Tally& tally_;
    std::mt19937_64 random_;
    std::vector<Pending> pending_;
    std::chrono::steady_clock::time_point start_, end_, last_restart_, proxy_busy_until_;
    /// Which of the cluster's nodes the next restart hits (chosen at random at the first).
    std::optional<std::size_t> next_restart_node_;
};

}  // namespace tributary::crash
