#include "run_observer.h"

#include <spdlog/spdlog.h>

namespace tributary::cli {

namespace {

std::int64_t steady_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace

RunObserver::RunObserver(metrics::LoaderMetrics* metrics) : metrics_(metrics), last_activity_ns_(steady_ns()) {}

void RunObserver::touch() { last_activity_ns_.store(steady_ns(), std::memory_order_relaxed); }

void RunObserver::turn_done(const Source& source, const TurnReport& turn) {
    touch();
    if (metrics_) metrics_->turn_done(source, turn);
}

void RunObserver::pass_done(const PassSummary& summary) {
    touch();
    if (metrics_) metrics_->pass_done(summary);
}

void RunObserver::idle_sleep(std::chrono::milliseconds pause) {
    touch();
    if (metrics_) metrics_->idle_sleep(pause);
}

void RunObserver::database_changed(bool reachable, const std::string& why) {
    std::lock_guard<std::mutex> guard(mutex_);
    const bool was_up = workers_away_ == 0;
    workers_away_ += reachable ? -1 : 1;
    if (!reachable) outage_reason_ = why;
    const bool is_up = workers_away_ == 0;
    if (was_up && !is_up)
        spdlog::error("database unavailable, retrying with backoff (each worker reconnects by itself): {}", why);
    if (!was_up && is_up) spdlog::info("database reachable again; loading resumes");
    if (metrics_ && was_up != is_up) metrics_->database_changed(is_up, why);
}

void RunObserver::lock_stranger(const Source& source, const std::optional<LockHolder>& holder) {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        if (holder) strangers_[source.name] = *holder;
        else strangers_.erase(source.name);
    }
    if (metrics_) metrics_->lock_stranger(source, holder);
}

metrics::Health RunObserver::health(std::chrono::seconds quiet_limit) const {
    std::vector<std::string> warnings;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        if (workers_away_ > 0) return {false, "database unreachable: " + outage_reason_, {}};
        for (const auto& [name, holder] : strangers_)
            warnings.push_back("source " + name + " locked by pid " + std::to_string(holder.pid) + " (user " +
                               holder.user + ", application '" + holder.application + "'), not a tributary loader");
    }
    const auto quiet = std::chrono::nanoseconds(steady_ns() - last_activity_ns_.load(std::memory_order_relaxed));
    if (quiet > quiet_limit)
        return {false,
                "no loader activity for " +
                    std::to_string(std::chrono::duration_cast<std::chrono::seconds>(quiet).count()) + " s",
                {}};
    return {true, {}, warnings};
}

}  // namespace tributary::cli
