#include "console_group_metrics.h"

#include <spdlog/spdlog.h>

#include "console/group_figures_document.h"
#include "core/errors.h"

namespace tributary::metrics {

namespace {

double unix_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

}  // namespace

ConsoleGroupMetrics::ConsoleGroupMetrics(console::ConsoleStore& store, const std::string& version,
                                         std::chrono::steady_clock::duration max_age, Now now)
    : store_(store), metrics_(version), max_age_(max_age), now_(std::move(now)) {}

std::string ConsoleGroupMetrics::scrape() {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        const auto now = now_();
        if (!read_at_ || now - *read_at_ >= max_age_) {
            read_groups();
            read_at_ = now;
        }
    }
    return metrics_.scrape();
}

void ConsoleGroupMetrics::read_groups() {
    std::string why;
    try {
        metrics_.read(console::group_figures(store_.groups()), unix_now());
        if (failing_) spdlog::info("console: metrics: the groups are read again");
        failing_ = false;
        return;
    } catch (const DatabaseUnavailable& e) {
        why = std::string("database unavailable: ") + e.what();
    } catch (const std::exception& e) {
        why = e.what();  // a role without the grant, a document of another shape
    }
    metrics_.read_failed();
    // Once per outage, not once per scrape.
    if (!failing_)
        spdlog::warn(
            "console: metrics: cannot read the groups ({}); serving the last read's group series "
            "with tributary_console_database_up 0",
            why);
    failing_ = true;
}

}  // namespace tributary::metrics
