#include "stop_signal.h"

namespace tributary {

void StopSignal::request_stop() {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        stopped_ = true;
    }
    woken_.notify_all();
}

bool StopSignal::wait_for(std::chrono::steady_clock::duration d) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return woken_.wait_for(lock, d, [this] { return stopped_.load(); });
}

}  // namespace tributary
