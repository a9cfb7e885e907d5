#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

namespace tributary {

/// A process-wide "please stop" that wakes every sleeper at once. Set from the
/// signal-handling thread; read by loaders between steps and by fetchers
/// during a transfer (so a stop abandons a slow request).
class StopSignal {
public:
    void request_stop();
    bool stop_requested() const noexcept { return stopped_.load(std::memory_order_relaxed); }
    /// Waits for `d`; returns early (true) when a stop is requested.
    bool wait_for(std::chrono::steady_clock::duration d) const;
    /// Runs `hook` when a stop is requested (at once if it was already), on
    /// the requesting thread: for waits that a condition variable cannot
    /// reach, such as a thread blocked in poll(). Hooks must be quick.
    void on_stop(std::function<void()> hook);

private:
    std::atomic<bool> stopped_{false};
    // Waiting does not change the signal: const waiters (handlers given a
    // const StopSignal&) may wait too.
    mutable std::mutex mutex_;
    mutable std::condition_variable woken_;
    std::vector<std::function<void()>> hooks_;
};

}  // namespace tributary
