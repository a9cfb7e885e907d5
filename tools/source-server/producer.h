#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "source_store.h"

namespace tributary::source_server {

// One thread that grows every source at `rate` events/second after start, up to
// `max_events` (0 = no cap). Events are stamped with the wall-clock time at which they
// become visible, so created_at_us measures real end-to-end latency.
class Producer {
public:
    Producer(SourceSet& sources, std::int64_t backlog, double rate, std::int64_t max_events);
    ~Producer();
    Producer(const Producer&) = delete;
    Producer& operator=(const Producer&) = delete;

    void start();
    void stop();

private:
    void run();
    std::int64_t target_at(std::chrono::steady_clock::time_point t) const;

    SourceSet& sources_;
    const std::int64_t backlog_;
    const double rate_;
    const std::int64_t max_events_;
    std::chrono::steady_clock::time_point start_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace tributary::source_server
