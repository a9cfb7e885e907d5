#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "core/loader_observer.h"
#include "metrics/health.h"
#include "metrics/loader_metrics.h"

namespace tributary::cli {

/// What the workers of one `run` process share about themselves: database
/// outages are logged once per process (not once per worker, source or
/// retry), liveness and database state feed /healthz, and everything is
/// passed on to the metrics when they are on.
class RunObserver : public LoaderObserver {
public:
    /// `metrics` may be null (no --listen).
    explicit RunObserver(metrics::LoaderMetrics* metrics);

    void turn_done(const Source& source, const TurnReport& turn) override;
    void pass_done(const PassSummary& summary) override;
    void idle_sleep(std::chrono::milliseconds pause) override;
    void database_changed(bool reachable, const std::string& why) override;
    void lock_stranger(const Source& source, const std::optional<LockHolder>& holder) override;

    /// Healthy when no worker is cut off from the database and some worker
    /// did something within `quiet_limit`; sources locked by strangers are
    /// warnings (the process is fine: restarting it would not help).
    metrics::Health health(std::chrono::seconds quiet_limit) const;

private:
    void touch();

    metrics::LoaderMetrics* metrics_;
    std::atomic<std::int64_t> last_activity_ns_;
    mutable std::mutex mutex_;
    int workers_away_ = 0;
    std::string outage_reason_;
    std::map<std::string, LockHolder> strangers_;  ///< by source name: /healthz says so
};

}  // namespace tributary::cli
