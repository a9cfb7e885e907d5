#include "stop_signal.h"

namespace tributary {

void StopSignal::request_stop() {
    std::vector<std::function<void()>> hooks;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        stopped_ = true;
        hooks.swap(hooks_);
    }
    woken_.notify_all();
    for (auto& hook : hooks) hook();
}

void StopSignal::on_stop(std::function<void()> hook) {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        if (!stopped_) {
            hooks_.push_back(std::move(hook));
            return;
        }
    }
    hook();
}

bool StopSignal::wait_for(std::chrono::steady_clock::duration d) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return woken_.wait_for(lock, d, [this] { return stopped_.load(); });
}

}  // namespace tributary
