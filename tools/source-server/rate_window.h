#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace tributary::source_server {

// --rate-limit N --rate-window-ms W: each source answers N requests per fixed window of W ms
// (windows aligned on multiples of W since the epoch, so every client sees the same reset).
struct RateLimit {
    std::int64_t requests = 0;  // 0 = no limit
    std::int64_t window_ms = 1000;
    bool enabled() const { return requests > 0 && window_ms > 0; }
};

// What one request was told.
struct RateVerdict {
    bool allowed = true;
    std::int64_t limit = 0;
    std::int64_t remaining = 0;     // after this request
    std::int64_t reset_unix_s = 0;  // the window's end, rounded up to the second (GitHub's X-RateLimit-Reset)
    std::int64_t reset_in_s = 0;    // seconds until then, rounded up (the IETF RateLimit t=)
};

// One source's budget in the current window.
class RateWindow {
public:
    RateVerdict take(const RateLimit& limit, std::int64_t now_ms);
    std::int64_t refused() const { return refused_.load(std::memory_order_relaxed); }

private:
    std::mutex mutex_;
    std::int64_t window_index_ = -1;
    std::int64_t used_ = 0;
    std::atomic<std::int64_t> refused_{0};
};

}  // namespace tributary::source_server
