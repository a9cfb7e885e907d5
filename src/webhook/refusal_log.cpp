#include "refusal_log.h"

namespace tributary::webhook {

std::optional<std::size_t> RefusalLog::admit(const std::string& source, Clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto [it, first] = sources_.try_emplace(source);
    Quiet& quiet = it->second;
    if (!first && now - quiet.last_line < interval_) {
        ++quiet.unlogged;
        return std::nullopt;
    }
    quiet.last_line = now;
    return std::exchange(quiet.unlogged, 0);
}

}  // namespace tributary::webhook
