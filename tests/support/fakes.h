#pragma once

// One hand-written fake per port (as spdlog's test_sink): in-memory, single
// threaded, with switches to inject failures and counters to observe calls.

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "core/clock.h"
#include "core/event_fetcher.h"
#include "core/event_store.h"
#include "core/source_catalog.h"
#include "core/source_gate.h"

namespace tributary::fakes {

/// Time stands still until someone sleeps; sleeps are recorded.
class FakeClock : public Clock {
public:
    time_point now() const override { return now_; }
    void sleep_for(duration d) override {
        sleeps.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(d));
        now_ += d;
        if (on_sleep) on_sleep();
    }
    void advance(duration d) { now_ += d; }

    std::vector<std::chrono::milliseconds> sleeps;
    std::function<void()> on_sleep;  ///< e.g. request a stop after N sleeps

private:
    time_point now_{};
};

/// The gate and the source locks of one worker's session. Locks another
/// worker holds are set by hand (`locked_elsewhere`).
class FakeSourceGate : public SourceGate {
public:
    explicit FakeSourceGate(const Clock& clock) : clock_(clock) {}
    Pass try_pass(const Source& source) override;
    void record_success(const Source& source, std::int64_t lease, const Success& success) override;
    void release_slot(const Source& source, std::int64_t lease) override;
    void record_failure(const Source& source, std::int64_t lease, Failure kind, const std::string& error,
                        std::chrono::milliseconds delay) override;

    struct Row {
        Clock::time_point next_allowed{};
        int failures = 0;
        bool drained = false;
        int empty_streak = 0;
        std::optional<std::int64_t> backlog;
        std::int64_t lease = 0;
        std::int64_t closed_lease = 0;
        std::string state = "ok";
        std::string last_error;
    };
    std::map<int, Row> rows;
    int passes = 0, successes = 0, failures = 0;
    std::set<int> held;              ///< sources whose lock this worker holds
    std::set<int> locked_elsewhere;  ///< sources whose lock another worker holds
    int locks_taken = 0, locks_released = 0;
    bool holds(int source_id) const { return held.count(source_id) > 0; }
    bool fail_pass = false;  ///< try_pass throws DatabaseUnavailable
    /// The next record_failure loses its connection: before it commits, or
    /// after (its outcome unknown to the caller).
    enum class CloseLoss { none, before, after } lose_next_close = CloseLoss::none;

private:
    /// Every close lets the lock go first, as the real one does.
    void unlock(int source_id);

    const Clock& clock_;
};

class FakeEventStore : public EventStore {
public:
    std::int64_t cursor(int source_id) override { return cursors[source_id]; }
    AppendResult append(int source_id, std::int64_t expected_cursor, const EventBatch& batch,
                        const SourceGate::SlotSuccess* close = nullptr) override;

    std::map<int, std::int64_t> cursors;
    std::map<int, EventBatch> events;
    /// Thrown by the next append (once), e.g. DatabaseUnavailable.
    std::function<void()> fail_next_append;
    /// Runs inside append before the compare-and-set: another writer racing.
    std::function<void(int source_id)> before_compare_and_set;
    int appends = 0;
    /// Where the closes handed to append go (none: they are dropped).
    SourceGate* gate = nullptr;

private:
    AppendResult store(int source_id, std::int64_t expected_cursor, const EventBatch& batch);
};

/// Serves each source's events from a list, or scripted results first.
class FakeEventFetcher : public EventFetcher {
public:
    FetchResult fetch(const Source& source, std::int64_t after_id, int limit) override;

    void produce(int source_id, std::int64_t first_id, std::int64_t count);
    std::map<int, EventBatch> available;
    std::map<int, std::deque<FetchResult>> scripted;
    std::function<void(int source_id)> throw_on_fetch;
    int fetches = 0;
};

/// Every source is due unless a gate is given: then the gate's rows decide,
/// as the real catalog reads the gates table.
class FakeSourceCatalog : public SourceCatalog {
public:
    FakeSourceCatalog() = default;
    FakeSourceCatalog(const FakeSourceGate& gate, const Clock& clock) : gate_(&gate), clock_(&clock) {}
    SourceSchedule schedule(const ScheduleShare& share) override;
    Source& add(int id, const std::string& name);
    std::vector<Source> sources;

private:
    const FakeSourceGate* gate_ = nullptr;
    const Clock* clock_ = nullptr;
};

}  // namespace tributary::fakes
