#include "outage_log.h"

#include <spdlog/spdlog.h>

namespace tributary {

void OutageLog::down(const std::string& why) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (down_) return;
    down_ = true;
    spdlog::error("{} database unavailable, retrying with backoff: {}", context_, why);
}

void OutageLog::up() {
    std::lock_guard<std::mutex> guard(mutex_);
    if (!down_) return;
    down_ = false;
    spdlog::info("{} database reachable again", context_);
}

bool OutageLog::is_down() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return down_;
}

}  // namespace tributary
