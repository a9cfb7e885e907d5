#pragma once

#include <atomic>
#include <thread>

#include "core/stop_signal.h"

namespace tributary::cli {

/// Turns SIGINT, SIGTERM, SIGHUP and SIGQUIT into a graceful stop. The
/// signals are blocked in every thread and taken by one thread with
/// sigwait, so no work happens in a signal handler. Construct it before
/// starting other threads (they inherit the blocked mask).
class SignalWatcher {
public:
    explicit SignalWatcher(StopSignal& stop);
    ~SignalWatcher();
    SignalWatcher(const SignalWatcher&) = delete;
    SignalWatcher& operator=(const SignalWatcher&) = delete;

private:
    StopSignal& stop_;
    std::atomic<bool> closing_{false};
    std::thread thread_;
};

}  // namespace tributary::cli
