#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "core/stop_signal.h"
#include "metrics/log_metrics.h"

namespace tributary::cli {

/// How often the process serving /metrics asks tributary.log_status(): its
/// figures move slowly (partitions last hours to days), and each refresh
/// reads every partition's index once.
constexpr std::chrono::seconds kLogMetricsRefresh{30};

/// Refreshes `metrics` from tributary.log_status() at once and then every
/// kLogMetricsRefresh, on a thread and a database session of its own, until
/// destroyed (the thread is stopped and joined then). A failed refresh is
/// logged once per outage and leaves the last figures.
class LogMetricsRefresher {
public:
    LogMetricsRefresher(std::string db, metrics::LogMetrics& metrics);
    ~LogMetricsRefresher();
    LogMetricsRefresher(const LogMetricsRefresher&) = delete;
    LogMetricsRefresher& operator=(const LogMetricsRefresher&) = delete;

private:
    void run();

    std::string db_;
    metrics::LogMetrics& metrics_;
    StopSignal stop_;
    std::thread thread_;
};

}  // namespace tributary::cli
