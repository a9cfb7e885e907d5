#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "core/stop_signal.h"
#include "maintenance/elected_role.h"

namespace tributary::cli {

/// The herald's flags, as `run`, `receive`, `maintain` and `consume` take them.
struct HeraldFlags {
    /// --herald-interval; empty: the default, kInterval, or kCitusInterval where the log is
    /// distributed over Citus (a beat there asks every worker: docs/citus.md, wake-ups).
    std::string interval;
    std::string lease = "2s";
    bool off = false;  ///< --no-herald

    static constexpr std::chrono::milliseconds kInterval{10};
    static constexpr std::chrono::milliseconds kCitusInterval{50};

    /// Parsed; throws UsageError (not a duration, a lease under 1 s, an interval of 0 or over a
    /// third of the lease).
    maintenance::ElectionTimings timings() const;
};

/// Adds --herald-interval, --herald-lease and --no-herald to `cmd`.
void add_herald_flags(CLI::App& cmd, HeraldFlags& flags);

/// This process's part in the herald's election (sql/internal/87_herald.sql), on a thread of its
/// own and a session of its own, until `stop` or its own end; then it releases the lease if it
/// held it. Nothing with --no-herald. Never fails the process: a role that may not herald warns
/// once and the thread ends; any other failure is logged and tried again after a lease.
class HeraldThread {
public:
    HeraldThread(const std::string& db, const HeraldFlags& flags, StopSignal& stop);
    /// Stops the herald (not the process) and joins it.
    ~HeraldThread();
    HeraldThread(const HeraldThread&) = delete;
    HeraldThread& operator=(const HeraldThread&) = delete;

private:
    /// Its own stop, which the process's also requests: it ends with its command, however that ends.
    std::shared_ptr<StopSignal> stop_ = std::make_shared<StopSignal>();
    std::optional<std::thread> thread_;
};

}  // namespace tributary::cli
