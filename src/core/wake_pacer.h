#pragma once

#include <chrono>
#include <optional>

namespace tributary {

/// Turns a stream of notifications into wake-ups at most one per `window`:
/// the first notification after a quiet window wakes at once; the ones that
/// follow within the window are owed one wake-up, at the window's end. Any
/// database user may NOTIFY a channel we listen on, in a loop: without this,
/// each notification would cost every sleeping worker a schedule read.
/// Times are passed in (steady clock), so that it is tested without sleeping.
/// Not thread-safe: the listening thread's own.
class WakePacer {
public:
    using time_point = std::chrono::steady_clock::time_point;

    explicit WakePacer(std::chrono::milliseconds window) : window_(window) {}

    /// A notification arrived.
    void notified() { owed_ = true; }

    /// Whether to wake the waiters at `now`; true at most once per window,
    /// and only when a notification is owed one.
    bool wake_now(time_point now) {
        if (!owed_ || (woken_ && now < last_ + window_)) return false;
        owed_ = false;
        woken_ = true;
        last_ = now;
        return true;
    }

    /// When the owed wake-up is due (at once or later); empty when none is owed.
    std::optional<time_point> due() const {
        if (!owed_) return std::nullopt;
        return woken_ ? last_ + window_ : time_point{};  // the clock's epoch: already due
    }

private:
    const std::chrono::milliseconds window_;
    bool owed_ = false;
    bool woken_ = false;  ///< once: a first wake-up is never held back
    time_point last_{};
};

}  // namespace tributary
