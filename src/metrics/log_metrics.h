#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "core/log_status.h"

namespace tributary::metrics {

/// The log's Prometheus gauges, from tributary.log_status() (refreshed by
/// the process serving /metrics, every 30 s). A value the status does not
/// know (no event yet, no rate measured, nothing to drop) has no series:
/// a 0 would read as "now"; and before the first refresh no gauge has one
/// (a 0 there would read as "no partition", "no open transaction").
/// Thread-safe: the refresher updates, the server's thread scrapes.
class LogMetrics {
public:
    /// `holder`: this process's name in the maintainer's election (empty
    /// when it takes no part), for tributary_maintainer_is_leader.
    explicit LogMetrics(std::string holder);

    void update(const LogStatus& status);
    /// The exposition text (Prometheus text format 0.0.4).
    std::string scrape();

private:
    void set_known(prometheus::Family<prometheus::Gauge>& family, const std::optional<double>& value);

    std::string holder_;
    std::shared_ptr<prometheus::Registry> registry_;
    std::mutex mutex_;
    prometheus::Family<prometheus::Gauge>& bytes_;
    prometheus::Family<prometheus::Gauge>& partitions_;
    prometheus::Family<prometheus::Gauge>& oldest_event_age_;
    prometheus::Family<prometheus::Gauge>& default_events_;
    prometheus::Family<prometheus::Gauge>& ahead_;
    prometheus::Family<prometheus::Gauge>& next_drop_;
    prometheus::Family<prometheus::Gauge>& archive_failing_;
    prometheus::Family<prometheus::Gauge>& held_;
    prometheus::Family<prometheus::Gauge>& oldest_transaction_age_;
    prometheus::Family<prometheus::Gauge>& xmin_lag_;
    prometheus::Family<prometheus::Gauge>& is_leader_;
    std::map<std::string, prometheus::Gauge*> held_by_group_;
};

}  // namespace tributary::metrics
