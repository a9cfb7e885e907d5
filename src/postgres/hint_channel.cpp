#include "hint_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <map>
#include <mutex>

#include <spdlog/spdlog.h>
#include <pqxx/pqxx>

#include "core/wake_pacer.h"
#include "session_settings.h"

namespace tributary::postgres {

struct HintChannel::State {
    std::mutex mutex;
    std::condition_variable rung;
    std::uint64_t generation = 0;
    std::uint64_t received = 0, wakeups = 0;
    int pipe[2] = {-1, -1};  ///< wakes the thread out of poll(): a stop

    State() {
        if (::pipe2(pipe, O_NONBLOCK | O_CLOEXEC) != 0)
            throw std::runtime_error("cannot create a pipe for the hint channel");
    }
    ~State() {
        ::close(pipe[0]);
        ::close(pipe[1]);
    }
    /// Wakes every waiter: there may be work.
    void ring() {
        {
            std::lock_guard<std::mutex> guard(mutex);
            ++generation;
            ++wakeups;
        }
        rung.notify_all();
    }
    /// Wakes the thread; a full pipe already will.
    void poke() const {
        const char byte = 1;
        [[maybe_unused]] const auto n = ::write(pipe[1], &byte, 1);
    }
    void drain() const {
        char buffer[64];
        while (::read(pipe[0], buffer, sizeof buffer) == static_cast<ssize_t>(sizeof buffer)) {
        }
    }
};

namespace {

/// Counts a notification and owes the waiters a wake-up; the channel's
/// thread rings when the pacer lets it.
class Receiver : public pqxx::notification_receiver {
public:
    Receiver(pqxx::connection_base& c, const std::string& channel, HintChannel::State& state, WakePacer& pacer)
        : pqxx::notification_receiver(c, channel), state_(state), pacer_(pacer) {}
    void operator()(const std::string&, int) override {
        {
            std::lock_guard<std::mutex> guard(state_.mutex);
            ++state_.received;
        }
        pacer_.notified();
    }

private:
    HintChannel::State& state_;
    WakePacer& pacer_;
};

/// ms from now until `t`, for poll(): 0 when past, rounded up.
int poll_timeout(std::chrono::steady_clock::time_point t) {
    const auto left = t - std::chrono::steady_clock::now();
    return static_cast<int>(std::max<long long>(0, std::chrono::ceil<std::chrono::milliseconds>(left).count()));
}

}  // namespace

HintChannel::HintChannel(std::string conninfo, Options options, StopSignal& stop)
    : conninfo_(std::move(conninfo)), options_(std::move(options)), stop_(stop), state_(std::make_shared<State>()) {
    // A stop must end waits at once, and the thread's poll() too.
    stop_.on_stop([state = state_] {
        // Under the mutex: a waiter between its check and its sleep would
        // otherwise miss this and sleep its whole timeout.
        { std::lock_guard<std::mutex> guard(state->mutex); }
        state->rung.notify_all();
        state->poke();
    });
    thread_ = std::thread([this] { run(); });
}

HintChannel::~HintChannel() {
    {
        std::lock_guard<std::mutex> guard(state_->mutex);
        done_ = true;
    }
    state_->rung.notify_all();  // ends a reconnect pause at once
    state_->poke();             // and a poll()
    thread_.join();
}

void HintChannel::wait(std::chrono::milliseconds longest) {
    // Each thread remembers the last ring it saw, so a hint that came while
    // it was busy ends its next wait at once rather than being missed.
    thread_local std::map<const State*, std::uint64_t> seen_by_thread;
    auto& seen = seen_by_thread[state_.get()];
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->rung.wait_for(lock, longest, [&] { return state_->generation != seen || stop_.stop_requested(); });
    seen = state_->generation;
}

std::uint64_t HintChannel::received() const {
    std::lock_guard<std::mutex> guard(state_->mutex);
    return state_->received;
}

std::uint64_t HintChannel::wakeups() const {
    std::lock_guard<std::mutex> guard(state_->mutex);
    return state_->wakeups;
}

void HintChannel::run() {
    auto pause = std::chrono::milliseconds(500);
    while (!stop_.stop_requested() && !done_) {
        try {
            serve_one_connection();
            pause = std::chrono::milliseconds(500);
        } catch (const std::exception& e) {
            // The loader or consumer reports outages; hints are best effort.
            spdlog::debug("hint channel: {}; reconnecting in {} ms", e.what(), pause.count());
        }
        std::unique_lock<std::mutex> lock(state_->mutex);
        if (state_->rung.wait_for(lock, pause, [this] { return stop_.stop_requested() || done_.load(); })) break;
        lock.unlock();
        pause = std::min(pause * 2, std::chrono::milliseconds(10000));
    }
}

void HintChannel::serve_one_connection() {
    pqxx::connection connection(with_connection_defaults(conninfo_));
    // Anyone may NOTIFY our channels, in a loop: however many come, waiters
    // wake (and workers read the schedule) at most once per window.
    WakePacer pacer(options_.wake_window);
    std::vector<std::unique_ptr<Receiver>> receivers;
    for (const auto& channel : options_.listen)
        receivers.push_back(std::make_unique<Receiver>(connection, channel, *state_, pacer));
    // Listening (again) from now: whatever was hinted before is lost, so
    // waiters look for themselves once.
    state_->ring();

    while (!stop_.stop_requested() && !done_) {
        int timeout_ms = -1;
        if (const auto wake_due = pacer.due()) timeout_ms = poll_timeout(*wake_due);
        pollfd fds[2] = {{connection.sock(), POLLIN, 0}, {state_->pipe[0], POLLIN, 0}};
        if (::poll(fds, 2, timeout_ms) < 0 && errno != EINTR)
            throw std::runtime_error("poll failed on the hint connection");
        if (fds[1].revents) state_->drain();
        // Every time, not only when the socket says so (cheap: it reads
        // what is there). Throws when the connection is gone.
        connection.get_notifs();
        if (pacer.wake_now(std::chrono::steady_clock::now())) state_->ring();
    }
}

}  // namespace tributary::postgres
