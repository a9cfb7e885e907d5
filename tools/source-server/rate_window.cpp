#include "rate_window.h"

namespace tributary::source_server {

RateVerdict RateWindow::take(const RateLimit& limit, std::int64_t now_ms) {
    const std::int64_t index = now_ms / limit.window_ms;
    const std::int64_t end_ms = (index + 1) * limit.window_ms;
    RateVerdict verdict;
    verdict.limit = limit.requests;
    verdict.reset_unix_s = (end_ms + 999) / 1000;
    verdict.reset_in_s = (end_ms - now_ms + 999) / 1000;
    std::lock_guard lock(mutex_);
    if (index != window_index_) {
        window_index_ = index;
        used_ = 0;
    }
    if (used_ >= limit.requests) {
        verdict.allowed = false;
        refused_.fetch_add(1, std::memory_order_relaxed);
    } else {
        ++used_;
    }
    verdict.remaining = limit.requests - used_;
    return verdict;
}

}  // namespace tributary::source_server
