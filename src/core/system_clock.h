#pragma once

#include "clock.h"
#include "stop_signal.h"

namespace tributary {

/// The real clock: steady time, and sleeps that a stop cuts short.
class SystemClock : public Clock {
public:
    explicit SystemClock(StopSignal& stop) : stop_(stop) {}
    time_point now() const override { return std::chrono::steady_clock::now(); }
    void sleep_for(duration d) override { stop_.wait_for(d); }

private:
    StopSignal& stop_;
};

}  // namespace tributary
