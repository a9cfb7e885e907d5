#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/stop_signal.h"
#include "core/wakeup.h"

namespace tributary::postgres {

/// A process's one connection for LISTEN hints (issue 7), on a thread of its
/// own. It wakes waiters when a notification arrives on one of the channels it
/// listens to, and also after every (re)connect, since hints sent while it was
/// away are lost. It sends none: events are announced by the herald
/// (sql/internal/87_herald.sql), source changes by the commands that make
/// them.
///
/// Notifications wake waiters at most once per `wake_window` (see
/// WakePacer): any database user can NOTIFY a channel, and a flood must not
/// turn into a schedule read per notification.
///
/// Hints are only hints: waiters also wake on their own timers, so a lost
/// hint costs latency, never events. A database away is retried quietly
/// (the loader or consumer says so for the process); a stop ends the thread
/// and wakes every waiter at once.
class HintChannel : public Wakeup {
public:
    struct Options {
        std::vector<std::string> listen;  ///< channels to wake on
        /// Wake-ups from notifications at most once per this. Every waiter
        /// wakes on each: a process of N loader workers sets N × 50 ms, so
        /// that a flood costs it one schedule read per 50 ms on average.
        std::chrono::milliseconds wake_window{50};
    };

    HintChannel(std::string conninfo, Options options, StopSignal& stop);
    ~HintChannel() override;
    HintChannel(const HintChannel&) = delete;
    HintChannel& operator=(const HintChannel&) = delete;

    /// Returns after at most `longest`; earlier on a stop, or when a
    /// notification or a reconnect came since this thread's last wait ended.
    void wait(std::chrono::milliseconds longest) override;

    /// Notifications received and wake-ups rung (notifications coalesced,
    /// and one per (re)connect) so far (for tests and metrics).
    std::uint64_t received() const;
    std::uint64_t wakeups() const;

    /// What the thread, the waiters and the stop hook share. The stop hook
    /// holds it too, so a stop after this channel is gone is harmless.
    struct State;

private:
    void run();
    void serve_one_connection();

    const std::string conninfo_;
    const Options options_;
    StopSignal& stop_;
    std::shared_ptr<State> state_;
    std::atomic<bool> done_{false};
    std::thread thread_;
};

}  // namespace tributary::postgres
