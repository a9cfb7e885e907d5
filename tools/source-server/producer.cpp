#include "producer.h"

#include <algorithm>
#include <cmath>

#include "wall_clock.h"

namespace tributary::source_server {

using Clock = std::chrono::steady_clock;

Producer::Producer(SourceSet& sources, std::int64_t backlog, double rate, std::int64_t max_events)
    : sources_(sources), backlog_(backlog), rate_(rate), max_events_(max_events) {}

Producer::~Producer() { stop(); }

void Producer::start() {
    if (rate_ <= 0 || (max_events_ > 0 && backlog_ >= max_events_)) return;  // nothing to produce
    start_ = Clock::now();
    thread_ = std::thread([this] { run(); });
}

void Producer::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

std::int64_t Producer::target_at(Clock::time_point t) const {
    double seconds = std::chrono::duration<double>(t - start_).count();
    auto target = backlog_ + static_cast<std::int64_t>(std::floor(seconds * rate_));
    if (max_events_ > 0) target = std::min(target, max_events_);
    return target;
}

void Producer::run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
        std::int64_t target = target_at(Clock::now());
        lock.unlock();
        std::int64_t now_us = realtime_us();
        for (const auto& source : sources_.all()) source->produce_until(target, now_us);
        lock.lock();
        if (max_events_ > 0 && target >= max_events_) break;  // every source is full

        // Sleep until the next event is due (at least 1 ms, at most 100 ms at a time).
        auto next_due = start_ + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(static_cast<double>(target - backlog_ + 1) / rate_));
        auto now = Clock::now();
        auto wake_at = std::clamp(next_due, now + std::chrono::milliseconds(1), now + std::chrono::milliseconds(100));
        wake_.wait_until(lock, wake_at, [this] { return stopping_; });
    }
}

}  // namespace tributary::source_server
