#pragma once
// What bench/webhook's two clients share, so that the receiver and its ceiling
// are measured alike: CONNECTIONS threads, each with its own connection, each
// sending one request at a time for SECONDS (closed loop: a thread sends its
// next request when the last one is answered), every request one event with a
// key no other request has. Per request: its status and its latency.
//
// A worker is set up (connected) in its thread before the clock starts, so
// connecting is outside the measured window. Nothing is retried.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>

namespace bench {

using Clock = std::chrono::steady_clock;

/// One event's payload, ~250 bytes of JSON like bench/consume's, with its key
/// as "id" (what a sender's event would carry).
inline std::string event_payload(const std::string& key, long long n) {
    return "{\"id\":\"" + key + "\",\"type\":\"order.created\",\"customer\":\"c-" + std::to_string(n % 9973) +
           "\",\"amount\":" + std::to_string(n % 100000) + ".5,\"note\":\"" + std::string(160, 'x') + "\"}";
}

/// What one thread saw.
struct ThreadTally {
    std::vector<float> latencies_ms;
    std::map<int, long long> statuses;      ///< HTTP status (or 201/200 for the ceiling); -1: a transport error
    std::vector<std::string> acknowledged;  ///< keys answered 201, when asked for
    long long connects = 0;                 ///< connections the worker opened (keep-alive: 1)
    std::string first_error;
};

struct Options {
    int connections = 32;
    double seconds = 10;
    std::string key_prefix = "k";
    std::string acknowledged_file;  ///< where to write the keys answered 201 ("" for none)
};

namespace detail {

inline double percentile(std::vector<float>& sorted, double p) {
    if (sorted.empty()) return 0;
    const auto rank = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
    return sorted[std::min(rank, sorted.size() - 1)];
}

inline double cpu_seconds() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

}  // namespace detail

/// Runs the load and prints one line of key=value figures:
///   connections= seconds= requests= per_s= p50_ms= p99_ms= max_ms= status_<code>=... errors=
///   connects= client_cpu_s=
/// make_worker(thread_index) is called in each thread and returns its worker:
/// worker.send(key, n, error) sends one request and returns its status (-1 when
/// it failed on the wire, `error` set if empty), worker.connects() how many
/// connections it opened (keep-alive: one).
/// Returns 0, or 1 when a worker could not be set up.
template <typename MakeWorker>
int run_load(const Options& options, MakeWorker make_worker) {
    std::vector<ThreadTally> tallies(static_cast<std::size_t>(options.connections));
    std::mutex mutex;
    std::condition_variable cv;
    int ready = 0;
    bool go = false;
    std::atomic<bool> setup_failed{false};
    Clock::time_point start{};
    Clock::time_point deadline{};
    const bool keep_keys = !options.acknowledged_file.empty();

    auto thread_main = [&](int index) {
        auto& tally = tallies[static_cast<std::size_t>(index)];
        try {
            auto worker = make_worker(index);
            {
                std::unique_lock<std::mutex> lock(mutex);
                ++ready;
                cv.notify_all();
                cv.wait(lock, [&] { return go; });
            }
            const std::string prefix = options.key_prefix + "-" + std::to_string(index) + "-";
            tally.latencies_ms.reserve(4096);
            for (long long n = 0; Clock::now() < deadline; ++n) {
                const std::string key = prefix + std::to_string(n);
                const auto sent = Clock::now();
                const int status = worker.send(key, n, tally.first_error);
                tally.latencies_ms.push_back(std::chrono::duration<float, std::milli>(Clock::now() - sent).count());
                ++tally.statuses[status];
                if (keep_keys && status == 201) tally.acknowledged.push_back(key);
            }
            tally.connects = worker.connects();
        } catch (const std::exception& e) {
            tally.first_error = e.what();
            setup_failed = true;
            std::unique_lock<std::mutex> lock(mutex);
            ++ready;
            cv.notify_all();
        }
    };

    std::vector<std::thread> threads;
    for (int i = 0; i < options.connections; ++i) threads.emplace_back(thread_main, i);
    {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return ready == options.connections; });
        start = Clock::now();
        deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.seconds));
        go = true;
        cv.notify_all();
    }
    const double cpu_before = detail::cpu_seconds();
    for (auto& t : threads) t.join();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpu = detail::cpu_seconds() - cpu_before;

    std::vector<float> all;
    std::map<int, long long> statuses;
    long long connects = 0;
    std::string error;
    for (auto& t : tallies) {
        all.insert(all.end(), t.latencies_ms.begin(), t.latencies_ms.end());
        for (const auto& [status, count] : t.statuses) statuses[status] += count;
        connects += t.connects;
        if (error.empty()) error = t.first_error;
    }
    std::sort(all.begin(), all.end());
    std::printf("connections=%d seconds=%.3f requests=%zu per_s=%.0f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f",
                options.connections, elapsed, all.size(), static_cast<double>(all.size()) / elapsed,
                detail::percentile(all, 0.50), detail::percentile(all, 0.99), all.empty() ? 0.0 : all.back());
    for (const auto& [status, count] : statuses)
        if (status >= 0) std::printf(" status_%d=%lld", status, count);
    std::printf(" errors=%lld connects=%lld client_cpu_s=%.2f\n", statuses.count(-1) ? statuses[-1] : 0LL, connects,
                cpu);
    if (!error.empty()) std::fprintf(stderr, "first refusal or error: %s\n", error.c_str());

    if (keep_keys) {
        std::ofstream out(options.acknowledged_file);
        for (const auto& t : tallies)
            for (const auto& key : t.acknowledged) out << key << '\n';
    }
    std::fflush(stdout);
    return setup_failed ? 1 : 0;
}

}  // namespace bench
