#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>

#include "core/stop_signal.h"

namespace tributary::cli {

/// `run`'s limits, watched on a thread of their own from the moment the command starts:
/// --max-runtime and --max-rss, each a graceful stop like a signal, and the wait for the
/// database before loading starts.
///
/// Every wait is bounded by --max-runtime, also one no statement timeout covers: a pooler
/// whose pool is full queues our first statement, and a server that accepts connections but
/// never answers leaves libpq waiting. Until `started()`, the thread logs every few seconds
/// what it waits for; at the max runtime (or on a stop) it ends the process at once, since
/// nothing has been taken yet. After `started()`, the max runtime asks the workers to stop; a
/// process still there `kStopGrace` later is waiting on the database, and exits with code 1
/// (nothing is lost: a batch is stored whole or not at all, and session locks die with the
/// process's connections).
class RunLimits {
public:
    static constexpr std::chrono::seconds kStopGrace{5};
    static constexpr std::chrono::seconds kWaitingNotice{5};

    /// `max_runtime` zero: no limit; `max_rss_mb` zero: no ceiling; `shown_max_runtime` as the
    /// user spelled it, for the log; `database` as it may be shown.
    RunLimits(std::chrono::milliseconds max_runtime, std::string shown_max_runtime, std::size_t max_rss_mb,
              std::string database, StopSignal& stop);
    ~RunLimits();
    RunLimits(const RunLimits&) = delete;
    RunLimits& operator=(const RunLimits&) = delete;

    /// The database answered: what follows is loading, stopped gracefully.
    void started() { started_ = true; }

    /// The process is done: ends the watch. Returns whether the memory ceiling stopped it.
    bool finish();

private:
    void watch();
    /// Ends the process now, with `code`, after the log's last line.
    [[noreturn]] static void exit_now(int code);

    const std::chrono::steady_clock::time_point begun_ = std::chrono::steady_clock::now();
    const std::chrono::milliseconds max_runtime_;
    const std::string shown_max_runtime_;
    const std::size_t max_rss_mb_;
    const std::string database_;
    StopSignal& stop_;
    StopSignal finished_;
    std::atomic<bool> started_{false};
    std::atomic<bool> memory_limit_{false};
    std::thread thread_;
};

}  // namespace tributary::cli
