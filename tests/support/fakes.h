#pragma once

// One hand-written fake per port (as spdlog's test_sink): in-memory, single
// threaded, with switches to inject failures and counters to observe calls.

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "core/clock.h"
#include "core/event_fetcher.h"
#include "core/source_catalog.h"
#include "core/source_turn.h"

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

/// What the loader's tables and locks hold, shared by all the workers of a
/// test as the database is: gate rows, cursors, events, and who holds each
/// source's lock.
struct FakeLoaderDatabase {
    struct Gate {
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
    std::map<int, Gate> gates;
    std::map<int, std::int64_t> cursors;  ///< sources keyed by id
    std::map<int, Cursor> positions;      ///< sources keyed by text (absent: at the start)
    std::map<int, EventBatch> events;
    /// source id -> the worker whose session holds its lock (none: free).
    std::map<int, int> lock_holder;
    /// A session that is not a loader's holds the source's lock.
    void lock_as_stranger(int source_id) { lock_holder[source_id] = -1; }
};

/// One worker's SourceTurn on a FakeLoaderDatabase: the same decisions,
/// leases and lock rules as PostgresSourceTurn (the turn contract test runs
/// both), with switches to inject failures and counters to observe calls.
/// Like PostgreSQL, it refuses a payload with a \u0000 escape.
class FakeSourceTurn : public SourceTurn {
public:
    FakeSourceTurn(FakeLoaderDatabase& db, const Clock& clock, int worker = 1)
        : db_(db), clock_(clock), worker_(worker) {}
    Claim claim(const Source& source) override;
    Appended append_and_close(const Source& source, const Claim& claim, EventBatch batch, Progress progress) override;
    void close(const Source& source, const SlotClose& close) override;

    bool holds(int source_id) const;
    int claims = 0, passes = 0, appends = 0, successes = 0, failures = 0;
    int locks_taken = 0, locks_released = 0;
    /// claim throws DatabaseUnavailable.
    bool fail_claim = false;
    /// Runs after the claim is decided, before it returns (e.g. a stall).
    std::function<void()> after_claim;
    /// Thrown by the next append_and_close (once), e.g. DatabaseUnavailable.
    std::function<void()> fail_next_append;
    /// Runs inside append_and_close before the compare-and-set: another
    /// writer racing.
    std::function<void(int source_id)> before_compare_and_set;
    /// The next failed close loses its connection: before it commits, or
    /// after (its outcome unknown to the caller).
    enum class CloseLoss { none, before, after } lose_next_close = CloseLoss::none;

private:
    void unlock(int source_id);
    /// The session died: every lock it held is gone.
    void lose_session();
    /// Applies a close to the gate row, once per lease.
    void apply(const Source& source, const SlotClose& close);
    bool store(int source_id, std::int64_t expected, const EventBatch& batch);
    /// Keyed by text: the compare-and-set on the position; returns the
    /// records skipped as already stored, or nothing on a conflict.
    std::optional<std::size_t> store_keyed(int source_id, const Cursor& expected, const Cursor& next,
                                           const EventBatch& batch);

    FakeLoaderDatabase& db_;
    const Clock& clock_;
    const int worker_;
};

/// Serves each source's events from a list, or scripted results first.
class FakeEventFetcher : public EventFetcher {
public:
    /// Sources keyed by id: the available events after the cursor's id.
    /// Keyed by text: the available events from the position's number on
    /// (a page of `limit` at an offset), `next` the offset after them.
    FetchResult fetch(const Source& source, const Cursor& cursor, int limit) override;

    void produce(int source_id, std::int64_t first_id, std::int64_t count);
    std::map<int, EventBatch> available;
    std::map<int, std::deque<FetchResult>> scripted;
    std::function<void(int source_id)> throw_on_fetch;
    int fetches = 0;
};

/// Every source is due unless a database is given: then its gate rows
/// decide, as the real catalog reads the gates table.
class FakeSourceCatalog : public SourceCatalog {
public:
    FakeSourceCatalog() = default;
    FakeSourceCatalog(const FakeLoaderDatabase& db, const Clock& clock) : db_(&db), clock_(&clock) {}
    SourceSchedule schedule(const ScheduleShare& share) override;
    Source& add(int id, const std::string& name);
    std::vector<Source> sources;

private:
    const FakeLoaderDatabase* db_ = nullptr;
    const Clock* clock_ = nullptr;
};

}  // namespace tributary::fakes
