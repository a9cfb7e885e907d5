#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "console/console_metrics.h"
#include "console/console_store.h"
#include "group_metrics.h"

namespace tributary::metrics {

/// The console's /metrics: the groups' gauges from ONE read of the groups
/// document (ConsoleStore::groups(), the same read as the Groups page),
/// kept for `max_age` so that several scrapers (two Prometheus servers, a
/// person with curl) cost one read. A failed read is kept as long: during
/// an outage the scrapers do not each wait for a connection attempt.
/// Scrapes that come while a read is under way wait for it. Thread-safe.
class ConsoleGroupMetrics : public console::ConsoleMetrics {
public:
    using Now = std::function<std::chrono::steady_clock::time_point()>;

    ConsoleGroupMetrics(console::ConsoleStore& store, const std::string& version,
                        std::chrono::steady_clock::duration max_age = std::chrono::seconds(5),
                        Now now = std::chrono::steady_clock::now);

    std::string scrape() override;

private:
    void read_groups();  // with mutex_ held

    console::ConsoleStore& store_;
    GroupMetrics metrics_;
    std::chrono::steady_clock::duration max_age_;
    Now now_;
    std::mutex mutex_;
    std::optional<std::chrono::steady_clock::time_point> read_at_;
    bool failing_ = false;  ///< the last read failed (said once in the log)
};

}  // namespace tributary::metrics
