#pragma once

#include <chrono>

namespace tributary {

/// Time as the loader sees it, injected so that idle pauses and backoff are
/// deterministic in tests.
class Clock {
public:
    using duration = std::chrono::steady_clock::duration;
    using time_point = std::chrono::steady_clock::time_point;

    virtual ~Clock() = default;
    virtual time_point now() const = 0;
    /// Sleeps for `d` or until a stop is requested, whichever comes first.
    /// Thread-safe.
    virtual void sleep_for(duration d) = 0;
};

}  // namespace tributary
