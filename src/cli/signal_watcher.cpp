#include "signal_watcher.h"

#include <pthread.h>
#include <csignal>

#include <spdlog/spdlog.h>

namespace tributary::cli {

namespace {

sigset_t stop_signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&set, s);
    // Our own wake-up call at shutdown; never sent by anyone else.
    sigaddset(&set, SIGUSR2);
    return set;
}

}  // namespace

SignalWatcher::SignalWatcher(StopSignal& stop) : stop_(stop) {
    const sigset_t set = stop_signals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    thread_ = std::thread([this, set] {
        for (;;) {
            int signal = 0;
            if (sigwait(&set, &signal) != 0) continue;
            if (signal == SIGUSR2) {
                if (closing_) return;
                continue;  // not ours: someone else's SIGUSR2 must not end the watch
            }
            if (stop_.stop_requested()) {
                spdlog::warn("received {} again: still finishing the batch in hand", strsignal(signal));
                continue;
            }
            spdlog::info("received {}: finishing the batch in hand, then stopping", strsignal(signal));
            stop_.request_stop();
        }
    });
}

SignalWatcher::~SignalWatcher() {
    closing_ = true;
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
}

}  // namespace tributary::cli
