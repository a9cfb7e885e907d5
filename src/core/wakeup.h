#pragma once

#include <chrono>

#include "stop_signal.h"

namespace tributary {

/// How a consumer whose read found nothing waits before reading again. Today
/// a plain pause; a LISTEN-based one (issue 7) returns as soon as a
/// notification says new events may be there. Thread-safe.
class Wakeup {
public:
    virtual ~Wakeup() = default;
    /// Returns after at most `longest`, earlier when new work may be there
    /// or a stop is requested.
    virtual void wait(std::chrono::milliseconds longest) = 0;
};

/// A pause that only a stop cuts short.
class PauseWakeup : public Wakeup {
public:
    explicit PauseWakeup(StopSignal& stop) : stop_(stop) {}
    void wait(std::chrono::milliseconds longest) override { stop_.wait_for(longest); }

private:
    StopSignal& stop_;
};

}  // namespace tributary
