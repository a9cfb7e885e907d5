#pragma once

// The loaders (and, with a second instance, the webhook receivers), kept
// running the way cron or systemd would: any process that exits is started
// again. Each exit is classified: a fault point fired, the harness killed
// it, a graceful stop after our SIGTERM, the database was unreachable at
// start while the harness had it down; anything else is an unexpected exit
// (an anomaly). Every incarnation's stderr is appended to LOG_DIR/NAME.log.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "processes.h"

namespace tributary::crash {

class Cluster;
class Tally;

/// Every incarnation's environment holds its number (1, 2, ...) under this
/// name, so that what it leaves behind (a consumer's record of its batches)
/// can be told from what the incarnation before it left.
extern const char* const kIncarnationVariable;

/// One supervised process: `BINARY --db DB_URL ARGS...`.
struct ProcessSpec {
    std::string name;  ///< also its application_name in PostgreSQL
    std::string db_url;
    bool via_proxy = false;
    std::vector<std::string> args;  ///< after --db URL: run --workers 2, receive --listen ...
    /// Ready (past startup, its signal handling set up) once this port on
    /// 127.0.0.1 accepts a connection; 0: once its stderr shows the config's ready_line.
    int ready_port = 0;
};

struct SupervisorConfig {
    std::string binary;           ///< tributary-crashable
    std::string role = "loader";  ///< in the harness's lines and the observations
    /// Printed once the process's signal handling is in place (when its spec has no ready_port).
    std::string ready_line = " worker(s)";
    std::string fault_points;      ///< TRIBUTARY_FAULT_POINTS; none when empty
    unsigned long long seed = 0;   ///< TRIBUTARY_FAULT_SEED base
    std::vector<std::string> env;  ///< more of every incarnation's environment (a receiver's secrets)
    std::string log_dir;
    std::chrono::milliseconds restart_delay{500};
    std::chrono::seconds graceful_limit{15};
};

class Supervisor {
public:
    Supervisor(SupervisorConfig config, std::vector<ProcessSpec> processes, Tally& tally, const Cluster& cluster);
    ~Supervisor();
    Supervisor(const Supervisor&) = delete;
    Supervisor& operator=(const Supervisor&) = delete;

    int size() const { return static_cast<int>(slots_.size()); }
    const ProcessSpec& spec(int i) const { return slots_[i].spec; }

    /// The faults. Each returns false (and does nothing) when process i is not
    /// in a state for it: not running, not started up yet, paused, stopping.
    bool kill9(int i);
    bool pause(int i);      // SIGSTOP
    bool resume(int i);     // SIGCONT; only the incarnation that was paused
    bool terminate(int i);  // SIGTERM; must exit 0 within graceful_limit
    std::optional<int> paused_count() const;
    std::optional<pid_t> pid_if_ready(int i) const;

    /// The end of the run: no more restarts, SIGCONT to all, SIGTERM to all;
    /// each must exit 0 within graceful_limit. Returns when all are gone.
    void stop_all();
    /// The longest time a process took to exit after SIGTERM.
    double max_graceful_stop_s() const;

private:
    struct Slot {
        ProcessSpec spec;
        std::unique_ptr<ChildProcess> process;
        int incarnation = 0;
        bool ready = false;  ///< past startup: its signal handling is set up
        bool paused = false;
        bool killed = false;  ///< SIGKILLed by the harness
        bool hung_reported = false;
        std::optional<std::chrono::steady_clock::time_point> sigterm_at;
        std::optional<std::chrono::steady_clock::time_point> restart_at;
    };

    void watch();
    void start(Slot& slot);
    void check_ready(Slot& slot);
    void on_exit(Slot& slot, int code);
    std::string classify(const Slot& slot, int code, const std::string& err);
    void scan_log(const Slot& slot, const std::string& err);
    void append_log(const Slot& slot, int code, const std::string& verdict, const std::string& err) const;
    bool all_gone() const;

    SupervisorConfig config_;
    Tally& tally_;
    const Cluster& cluster_;
    std::vector<Slot> slots_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    bool final_ = false;     ///< no more restarts
    bool quitting_ = false;  ///< the watch thread ends
    double max_graceful_s_ = 0;
    std::thread watcher_;
};

}  // namespace tributary::crash
