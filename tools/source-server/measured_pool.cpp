#include "measured_pool.h"

#include <chrono>
#include <cstdio>

#include "request_arrival.h"
#include "wall_clock.h"

namespace tributary::source_server {
namespace {

void raise_max(std::atomic<std::int64_t>& max, std::int64_t value) {
    std::int64_t seen = max.load(std::memory_order_relaxed);
    while (value > seen && !max.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
    }
}

constexpr std::int64_t kWaitedUs = 1000;   // the first request is stamped with the accept time
constexpr std::int64_t kDelayedUs = 5000;  // warned about, when it waited for lack of threads

}  // namespace

MeasuredPool::MeasuredPool(std::size_t threads, PoolStats& stats) : pool_(threads), stats_(stats) {
    stats_.threads = static_cast<int>(threads);
}

void MeasuredPool::enqueue(std::function<void()> fn) {
    stats_.connections.fetch_add(1, std::memory_order_relaxed);
    auto queued = std::chrono::steady_clock::now();
    std::int64_t accepted_us = realtime_us();
    bool starved = stats_.busy.load(std::memory_order_relaxed) >= stats_.threads;
    if (starved) stats_.starved.fetch_add(1, std::memory_order_relaxed);
    pool_.enqueue([this, queued, accepted_us, starved, fn = std::move(fn)] {
        auto waited =
            std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - queued).count();
        raise_max(stats_.max_wait_us, waited);
        if (waited > kWaitedUs) connection_waited(accepted_us);
        if (starved && waited > kDelayedUs) {
            if (!stats_.warned.exchange(true)) {
                std::fprintf(stderr,
                             "tributary-source-server: warning: all %d worker threads were busy; a connection waited "
                             "%.1f ms (each open connection holds a thread: raise --threads)\n",
                             stats_.threads, static_cast<double>(waited) / 1000.0);
            }
        }
        raise_max(stats_.max_busy, stats_.busy.fetch_add(1, std::memory_order_relaxed) + 1);
        fn();
        connection_finished();
        stats_.busy.fetch_sub(1, std::memory_order_relaxed);
    });
}

void MeasuredPool::shutdown() { pool_.shutdown(); }

}  // namespace tributary::source_server
