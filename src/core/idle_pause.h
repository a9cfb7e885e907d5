#pragma once

#include <algorithm>
#include <chrono>

namespace tributary {

/// The pause after a pass that did nothing: short at first (a source that
/// was merely gated is due again within its interval), doubling while the
/// loader stays idle, back to the minimum as soon as a pass does work.
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
