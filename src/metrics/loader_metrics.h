#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "core/loader_observer.h"

namespace tributary::metrics {

/// The loader's Prometheus metrics (names follow the Prometheus conventions:
/// `_total` counters, `_seconds` units). Thread-safe: every worker of the
/// process reports into one instance.
class LoaderMetrics : public LoaderObserver {
public:
    LoaderMetrics(int workers, const std::string& version);
    ~LoaderMetrics() override;

    void turn_done(const Source& source, const TurnReport& turn) override;
    void pass_done(const PassSummary& summary) override;
    void idle_sleep(std::chrono::milliseconds pause) override;
    void database_changed(bool reachable, const std::string& why) override;
    void lock_stranger(const Source& source, const std::optional<LockHolder>& holder) override;
    /// A worker opened a new database session after losing one.
    void database_reconnected();

    /// The exposition text (Prometheus text format 0.0.4), with the ages
    /// brought up to date.
    std::string scrape();

private:
    struct PerSource;
    PerSource& per_source(const std::string& name);  // with mutex_ held

    std::shared_ptr<prometheus::Registry> registry_;
    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<PerSource>> sources_;

    prometheus::Family<prometheus::Counter>& events_stored_;
    prometheus::Family<prometheus::Counter>& batches_stored_;
    prometheus::Family<prometheus::Counter>& fetch_errors_;
    prometheus::Family<prometheus::Counter>& lock_skips_;
    prometheus::Family<prometheus::Counter>& gate_skips_;
    prometheus::Family<prometheus::Histogram>& fetch_duration_;
    prometheus::Family<prometheus::Histogram>& append_duration_;
    prometheus::Family<prometheus::Gauge>& cursor_;
    prometheus::Family<prometheus::Gauge>& lag_;
    prometheus::Family<prometheus::Gauge>& failing_;
    prometheus::Family<prometheus::Gauge>& last_success_;
    prometheus::Family<prometheus::Gauge>& since_success_;
    prometheus::Family<prometheus::Gauge>& locked_by_stranger_;
    prometheus::Family<prometheus::Counter>& store_conflicts_;

    prometheus::Counter& passes_;
    prometheus::Counter& idle_sleeps_;
    prometheus::Counter& reconnects_;
    prometheus::Gauge& database_up_;
};

}  // namespace tributary::metrics
