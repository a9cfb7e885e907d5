#pragma once

#include <algorithm>
#include <chrono>

namespace tributary {

/// When to ask a source again that answered with nothing new: after its
/// interval the first time, then twice as long with each empty answer in a
/// row, up to `cap`. A source that answers with events is asked again at
/// the gate's pace (its interval). Idle sources thus cost about
/// sources / cap requests per second, however many there are.
class IdlePolling {
public:
    explicit IdlePolling(std::chrono::milliseconds cap) : cap_(cap) {}

    /// The pause after the `streak`-th empty answer in a row (1, 2, ...).
    std::chrono::milliseconds pause(std::chrono::milliseconds interval, int streak) const {
        if (interval >= cap_) return interval;
        auto pause = interval;
        for (int i = 1; i < streak && pause < cap_; ++i) pause *= 2;
        return std::min(pause, cap_);
    }

    std::chrono::milliseconds cap() const { return cap_; }

private:
    std::chrono::milliseconds cap_;
};

}  // namespace tributary
