#include "monitor.h"

#include <algorithm>
#include <cstdio>

#include "cluster.h"
#include "cursor_progress.h"
#include "hostile.h"
#include "report.h"
#include "sources.h"

namespace tributary::crash {

Monitor::Monitor(const Sources& sources, const Cluster& cluster, const HostileEpisodes& hostile)
    : sources_(sources), cluster_(cluster), hostile_(hostile), thread_([this] { run(); }) {}

Monitor::~Monitor() { stop(); }

void Monitor::stop() {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

bool Monitor::take(Sample& sample) const {
    try {
        sample.hostile = hostile_.active() > 0;
        const auto produced = sources_.produced();
        auto cursor = cursor_progress(cluster_);
        sample.t = elapsed_s();
        for (const auto& name : sources_.healthy()) {
            const long p = produced.at(name), c = cursor[name];
            sample.produced += p;
            sample.stored += c;
            sample.max_lag = std::max(sample.max_lag, p - c);
            sample.mean_lag += static_cast<double>(p - c) / static_cast<double>(sources_.healthy().size());
        }
        return true;
    } catch (const std::exception&) {
        return false;  // the database is restarting: no sample this second
    }
}

void Monitor::run() {
    const auto& plan = sources_.plan();
    const long cap = plan.max_events * static_cast<long>(sources_.healthy().size());
    bool caught_up = false;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        Sample sample;
        const bool ok = take(sample);
        lock.lock();
        if (ok) {
            // The figure is about steady state: from the first moment every
            // healthy source is within 5 s of production until production ends.
            if (!caught_up && sample.max_lag <= static_cast<long>(plan.rate * 5)) caught_up = true;
            if (caught_up && sample.produced < cap) samples_.push_back(sample);
        }
        wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; });
    }
}

std::vector<std::string> Monitor::figures() const {
    std::lock_guard<std::mutex> guard(mutex_);
    std::vector<std::string> out;
    for (const bool hostile : {true, false}) {
        double seconds = 0;
        long stored = 0, produced = 0;
        std::vector<long> lags;
        double mean_lag = 0;
        for (std::size_t i = 1; i < samples_.size(); ++i) {
            const auto &a = samples_[i - 1], &b = samples_[i];
            if (a.hostile != hostile || b.hostile != hostile || b.t - a.t > 5) continue;
            seconds += b.t - a.t;
            stored += b.stored - a.stored;
            produced += b.produced - a.produced;
            lags.push_back(b.max_lag);
            mean_lag += b.mean_lag;
        }
        char line[400];
        const char* label =
            hostile ? "healthy sources while >=1 hostile source fails" : "healthy sources while none is hostile";
        if (lags.empty()) {
            std::snprintf(line, sizeof line, "%s: no samples", label);
        } else {
            std::sort(lags.begin(), lags.end());
            const auto at = [&](double q) {
                return lags[std::min(lags.size() - 1, static_cast<std::size_t>(q * lags.size()))];
            };
            const double rate = sources_.plan().rate;
            std::snprintf(line, sizeof line,
                          "%s: %.0f s sampled, stored %.0f ev/s (produced %.0f ev/s), mean lag %.0f events; "
                          "worst source's lag p50 %ld / p95 %ld / max %ld events (max %.1f s of production)",
                          label, seconds, stored / seconds, produced / seconds,
                          mean_lag / static_cast<double>(lags.size()), at(0.5), at(0.95), lags.back(),
                          rate > 0 ? lags.back() / rate : 0.0);
        }
        out.push_back(line);
    }
    return out;
}

}  // namespace tributary::crash
