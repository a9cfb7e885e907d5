#pragma once

// Fakes of the consumer ports (GroupLog, BatchHandler, Wakeup). Unlike the
// loader's fakes these are thread-safe: the consumer runs workers and a
// heartbeat on threads of their own, as it does against PostgreSQL.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "core/batch_handler.h"
#include "core/group_log.h"
#include "core/wakeup.h"

namespace tributary::fakes {

/// The group's state, as the database holds it; shared by every
/// FakeGroupLog of a test as sessions share the database. Leases run on the
/// real steady clock.
struct FakeGroupState {
    using steady = std::chrono::steady_clock;
    struct Batch {
        std::string token;
        int delivery = 1;
        std::vector<LoggedEvent> events;
        steady::time_point leased_until;
    };

    /// Adds n events of sources read after-id to the log, numbered on
    /// from the last one added (seq == event_id; 1..n the first time).
    void produce(int n);
    /// Adds an event per key of source "stripe.events", keyed by text (no
    /// event_id), payload {"key": key}.
    void produce_keyed(const std::vector<std::string>& keys);
    /// Every acked seq, duplicates included.
    std::vector<std::int64_t> acked() const;
    /// Gives the batch in flight a new token, as a takeover by another
    /// consumer would: the holder's ack is refused.
    void steal(std::int64_t batch_id);
    std::size_t in_flight() const;

    std::chrono::milliseconds lease{1000};
    mutable std::mutex mutex;
    std::deque<LoggedEvent> fresh;
    std::int64_t last_seq = 0;                        ///< of the last event added
    std::deque<std::pair<LoggedEvent, int>> retries;  ///< event, deliveries so far; due at once
    std::map<std::int64_t, Batch> batches;
    std::vector<std::int64_t> acked_seqs;
    std::vector<std::string> errors;  ///< of failed batches
    std::int64_t next_batch = 1;
    int next_token = 1;
    // Faults: the next N calls throw DatabaseUnavailable. An ack riding on
    // `next` is an ack: failing_acks fail the whole call, before it does
    // anything, as failing_nexts fail any `next`.
    int failing_reads = 0, failing_acks = 0, failing_nexts = 0;
    /// The next N calls of `next` that carry an ack do their work, then
    /// throw DatabaseUnavailable: a reply lost after the commit.
    int lost_ack_replies = 0;
    bool group_missing = false;    ///< reads throw GroupNotFound
    bool failing_extends = false;  ///< every extend throws DatabaseUnavailable
    int reads = 0, extends = 0, acks = 0, fails = 0, expired_acks = 0;
    int nexts = 0, nexts_with_ack = 0;
    /// The consumers that said they stop (`leave`), in order. The fake is a
    /// group of one lane: leaving gives back nothing.
    std::vector<std::string> left;
    /// How many more calls of `awaits_lanes` answer true (lanes coming to a
    /// consumer of a group of lanes), and how many were made.
    int lanes_coming = 0;
    int awaits_lanes_calls = 0;
};

class FakeGroupLog : public GroupLog {
public:
    explicit FakeGroupLog(FakeGroupState& state) : state_(state) {}
    std::optional<LeasedBatch> read(const std::string& consumer, int max_events) override;
    NextBatch next(const std::string& consumer, int max_events, const LeasedBatch* previous) override;
    bool ack(const LeasedBatch& batch) override;
    bool fail(const LeasedBatch& batch, const std::string& error) override;
    bool extend(std::int64_t batch_id, const std::string& token) override;
    int leave(const std::string& consumer) override;
    bool awaits_lanes(const std::string& consumer) override;

private:
    LeasedBatch lease(std::int64_t id, FakeGroupState::Batch& batch);
    // The work of read and ack, under the state's lock.
    std::optional<LeasedBatch> lease_next(int max_events);
    bool ack_locked(const LeasedBatch& batch);
    FakeGroupState& state_;
};

/// A handler whose behaviour the test sets; counts what is in hand.
class FakeBatchHandler : public BatchHandler {
public:
    using Behaviour = std::function<HandlerResult(const LeasedBatch&, const StopSignal&)>;
    explicit FakeBatchHandler(Behaviour behaviour = nullptr) : behaviour_(std::move(behaviour)) {}
    HandlerResult handle(const LeasedBatch& batch, const StopSignal& abandon) override;

    std::atomic<int> in_hand{0}, most_in_hand{0}, calls{0};

private:
    Behaviour behaviour_;
};

/// Records each wait; waits a thousandth of it (tests stay fast); runs
/// `on_wait` after each (e.g. a stop after N waits).
class RecordingWakeup : public Wakeup {
public:
    void wait(std::chrono::milliseconds longest) override;
    std::vector<std::chrono::milliseconds> waits() const;
    std::function<void(std::size_t waits)> on_wait;

private:
    mutable std::mutex mutex_;
    std::vector<std::chrono::milliseconds> waits_;
};

/// A gate a handler waits at until the test opens it.
class Latch {
public:
    void open();
    /// Waits until opened; false after `timeout`.
    bool wait(std::chrono::milliseconds timeout = std::chrono::seconds(10));
    bool is_open() const;

private:
    mutable std::mutex mutex_;
    std::condition_variable opened_;
    bool open_ = false;
};

}  // namespace tributary::fakes
