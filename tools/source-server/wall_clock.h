#pragma once

#include <cstdint>
#include <ctime>

namespace tributary::source_server {

// CLOCK_REALTIME as unix microseconds (what created_at_us and arrival_us use).
inline std::int64_t realtime_us() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

}  // namespace tributary::source_server
