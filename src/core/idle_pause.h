#pragma once

#include <algorithm>
#include <chrono>

namespace tributary {

/// A pause that doubles while a condition lasts (the database away, a pass
/// that keeps failing), back to the minimum once it is over.
class IdlePause {
public:
    IdlePause(std::chrono::milliseconds min, std::chrono::milliseconds max) : min_(min), max_(max), next_(min) {}

    std::chrono::milliseconds next() {
        const auto pause = next_;
        next_ = std::min(next_ * 2, max_);
        return pause;
    }
    void reset() { next_ = min_; }

private:
    std::chrono::milliseconds min_;
    std::chrono::milliseconds max_;
    std::chrono::milliseconds next_;
};

}  // namespace tributary
