#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "event_generator.h"
#include "fault_modes.h"
#include "rate_window.h"

namespace tributary::source_server {

// One source's append-only log. Stores only creation times: the backlog (ids 1..backlog)
// shares one time, later events keep their own. Payloads are rendered on demand.
class Source {
public:
    Source(std::string name, std::int64_t backlog, std::int64_t backlog_created_us);

    const SourceIdentity& identity() const { return identity_; }
    const std::string& name() const { return identity_.name; }
    // The server's start (Unix ms): the fixtures' clocks count from it.
    std::int64_t start_ms() const { return start_ms_; }

    // Number of events (the highest id); ids are 1..produced().
    std::int64_t produced() const { return produced_.load(std::memory_order_acquire); }
    // Appends events stamped `now_us` until the source holds `target` events.
    void produce_until(std::int64_t target, std::int64_t now_us);

    // Events with id > after_id, at most `max`, in order (only ones that exist).
    std::vector<EventRef> events_after(std::int64_t after_id, std::int64_t max) const;
    // Ids first_id .. first_id+count-1 whether or not they exist yet; ids outside 1..produced()
    // are made up on the spot, stamped `now_us` (for hostile batches; the log is not touched).
    std::vector<EventRef> events_from(std::int64_t first_id, std::int64_t count, std::int64_t now_us) const;

    // Events with updated_ms >= since_ms in (updated_ms, id) order, at most `max`.
    std::vector<EventRef> events_updated_since(std::int64_t since_ms, std::int64_t max) const;

    FaultMode fault() const { return fault_.load(std::memory_order_relaxed); }
    FaultMode set_fault(FaultMode mode) { return fault_.exchange(mode); }

    void count_request() { requests_.fetch_add(1, std::memory_order_relaxed); }
    std::int64_t requests() const { return requests_.load(std::memory_order_relaxed); }

    RateWindow& rate_window() { return rate_window_; }
    const RateWindow& rate_window() const { return rate_window_; }

private:
    std::int64_t created_us_locked(std::int64_t id) const;
    std::int64_t updated_ms_locked(std::int64_t id) const;
    EventRef event_locked(std::int64_t id) const;

    SourceIdentity identity_;
    const std::int64_t backlog_;
    const std::int64_t backlog_created_us_;
    mutable std::shared_mutex mutex_;
    const std::int64_t start_ms_;            // updated_at of id i is start_ms_ + i (minus its lateness)
    std::vector<std::int64_t> produced_us_;  // created_at of ids backlog+1, backlog+2, ...
    std::vector<std::uint16_t> late_ms_;     // how late each produced event's updated_at is (fault `late`)
    bool any_late_ = false;
    std::atomic<std::int64_t> produced_;
    std::atomic<FaultMode> fault_{FaultMode::none};
    std::atomic<std::int64_t> requests_{0};
    RateWindow rate_window_;
};

// All sources, fixed at start; lookups need no lock.
class SourceSet {
public:
    void add(std::unique_ptr<Source> source);
    Source* find(const std::string& name) const;
    const std::vector<std::unique_ptr<Source>>& all() const { return sources_; }

private:
    std::vector<std::unique_ptr<Source>> sources_;
    std::unordered_map<std::string, Source*> by_name_;
};

}  // namespace tributary::source_server
