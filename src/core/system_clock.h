#pragma once

#include "clock.h"
#include "stop_signal.h"
#include "wakeup.h"

namespace tributary {

/// The real clock: steady time, and sleeps that a stop cuts short, and a
/// wake-up too when one is given (a hint that there is work).
class SystemClock : public Clock {
public:
    explicit SystemClock(StopSignal& stop, Wakeup* wakeup = nullptr) : stop_(stop), wakeup_(wakeup) {}
    time_point now() const override { return std::chrono::steady_clock::now(); }
    void sleep_for(duration d) override {
        if (wakeup_) wakeup_->wait(std::chrono::ceil<std::chrono::milliseconds>(d));
        else stop_.wait_for(d);
    }

private:
    StopSignal& stop_;
    Wakeup* wakeup_;
};

}  // namespace tributary
