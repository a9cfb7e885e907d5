#include "body_budget.h"
#include <algorithm>

namespace tributary {

bool BodyBudget::try_take(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > free_) return false;
    free_ -= bytes;
    return true;
}

bool BodyBudget::take(std::size_t bytes, std::chrono::steady_clock::time_point deadline, const StopSignal& stop) {
    // A stop does not notify this condition, so the wait looks at it now and then.
    constexpr std::chrono::milliseconds kStopCheck{100};
    std::unique_lock<std::mutex> lock(mutex_);
    while (bytes > free_) {
        if (stop.stop_requested() || std::chrono::steady_clock::now() >= deadline) return false;
        freed_.wait_until(lock, std::min(deadline, std::chrono::steady_clock::now() + kStopCheck));
    }
    free_ -= bytes;
    return true;
}

void BodyBudget::give_back(std::size_t bytes) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        free_ += bytes;
    }
    freed_.notify_all();
}

bool BodyAllowance::grow_to(std::size_t bytes, std::chrono::steady_clock::time_point deadline, const StopSignal& stop) {
    if (bytes <= held_) return true;
    const std::size_t more = bytes - held_;
    if (budget_ != nullptr) {
        const bool taken = held_ == 0 ? budget_->take(more, deadline, stop) : budget_->try_take(more);
        if (!taken) return false;
    }
    held_ = bytes;
    return true;
}

void BodyAllowance::shrink_to(std::size_t bytes) {
    if (bytes >= held_) return;
    if (budget_ != nullptr) budget_->give_back(held_ - bytes);
    held_ = bytes;
}

}  // namespace tributary
