#include "run_limits.h"

#include <cstdlib>

#include <spdlog/spdlog.h>

#include "exit_codes.h"
#include "resident_memory.h"

namespace tributary::cli {

namespace {

long long seconds_since(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

RunLimits::RunLimits(std::chrono::milliseconds max_runtime, std::string shown_max_runtime, std::size_t max_rss_mb,
                     std::string database, StopSignal& stop)
    : max_runtime_(max_runtime),
      shown_max_runtime_(std::move(shown_max_runtime)),
      max_rss_mb_(max_rss_mb),
      database_(std::move(database)),
      stop_(stop),
      thread_([this] { watch(); }) {}

RunLimits::~RunLimits() { finish(); }

bool RunLimits::finish() {
    finished_.request_stop();
    if (thread_.joinable()) thread_.join();
    return memory_limit_;
}

void RunLimits::exit_now(int code) {
    spdlog::default_logger()->flush();
    std::_Exit(code);
}

void RunLimits::watch() {
    const auto deadline = begun_ + max_runtime_;
    auto next_notice = begun_ + kWaitingNotice;
    std::chrono::steady_clock::time_point stopping{};  // when the max runtime asked the workers to stop
    auto next_rss_check = begun_;
    while (!finished_.wait_for(std::chrono::milliseconds(200))) {
        const auto now = std::chrono::steady_clock::now();
        const bool over = max_runtime_.count() && now >= deadline;
        if (!started_) {
            if (over) {
                spdlog::error(
                    "max runtime {} reached while waiting for the database {}: exiting (nothing was "
                    "taken or stored)",
                    shown_max_runtime_, database_);
                exit_now(exit_failure);
            }
            if (stop_.stop_requested()) {
                spdlog::info("stopped while waiting for the database {}", database_);
                exit_now(exit_ok);
            }
            if (now >= next_notice) {
                spdlog::warn("still waiting for the database {} after {} s (a server or pool that does not answer?){}",
                             database_, seconds_since(begun_),
                             max_runtime_.count() ? "; --max-runtime " + shown_max_runtime_ + " ends the wait" : "");
                next_notice = now + kWaitingNotice;
            }
            continue;
        }
        const bool stopping_by_limit = stopping != std::chrono::steady_clock::time_point{};
        if (over && !stopping_by_limit) {
            if (!stop_.stop_requested()) spdlog::info("max runtime {} reached, stopping", shown_max_runtime_);
            stopping = now;
            stop_.request_stop();
            continue;
        }
        if (stopping_by_limit) {
            if (now >= stopping + kStopGrace) {
                spdlog::error(
                    "max runtime {} passed {} s ago and the process is still waiting on the database: "
                    "exiting now (a batch is stored whole or not at all; locks go with the connections)",
                    shown_max_runtime_, seconds_since(deadline));
                exit_now(exit_failure);
            }
            continue;
        }
        if (stop_.stop_requested() || now < next_rss_check) continue;
        next_rss_check = now + std::chrono::seconds(1);
        const auto rss_mb = resident_bytes() / (1024 * 1024);
        if (max_rss_mb_ && rss_mb >= max_rss_mb_) {
            spdlog::warn(
                "memory ceiling reached (RSS {} MB, --max-rss {} MB): finishing the batches in hand, then "
                "exiting with code {} so the supervisor starts a fresh process",
                rss_mb, max_rss_mb_, static_cast<int>(exit_memory_limit));
            memory_limit_ = true;
            stop_.request_stop();
        }
    }
}

}  // namespace tributary::cli
