#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include <httplib.h>

namespace tributary::source_server {

// Counters kept outside the pool (httplib deletes its task queue when it stops).
struct PoolStats {
    int threads = 0;
    std::atomic<std::int64_t> connections{0};  // connections handed to the pool
    std::atomic<std::int64_t> busy{0};         // connections being served now
    std::atomic<std::int64_t> max_busy{0};
    std::atomic<std::int64_t> starved{0};  // connections accepted while every worker was busy
    std::atomic<std::int64_t> max_wait_us{0};
    std::atomic<bool> warned{false};
};

// httplib's ThreadPool, plus a record of how long accepted connections waited for a
// worker. Each open (keep-alive) connection holds a worker, so a connection that waits
// means --threads is too small and request arrival times would be recorded late.
class MeasuredPool : public httplib::TaskQueue {
public:
    MeasuredPool(std::size_t threads, PoolStats& stats);
    void enqueue(std::function<void()> fn) override;
    void shutdown() override;

private:
    httplib::ThreadPool pool_;
    PoolStats& stats_;
};

}  // namespace tributary::source_server
