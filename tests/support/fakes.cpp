#include "support/fakes.h"

#include <algorithm>
#include <stdexcept>

#include "core/errors.h"

namespace tributary::fakes {

SourceGate::Pass FakeSourceGate::try_pass(const Source& source) {
    if (fail_pass) throw DatabaseUnavailable("fake: database away");
    if (locked_elsewhere.count(source.id) > 0) return {Decision::locked, 0, false, 0, 0, std::nullopt};
    Row& row = rows[source.id];
    if (clock_.now() < row.next_allowed)
        return {row.failures > 0 ? Decision::backing_off : Decision::not_due, row.failures, row.drained,
                row.empty_streak, 0, std::nullopt};
    held.insert(source.id);
    ++locks_taken;
    row.next_allowed = clock_.now() + source.endpoint.timeout + source.interval;
    ++passes;
    // No cursor: the loader asks the store, as with a gate that cannot tell.
    return {Decision::pass, row.failures, row.drained, row.empty_streak, ++row.lease, std::nullopt};
}

void FakeSourceGate::unlock(int source_id) {
    if (held.erase(source_id) > 0) ++locks_released;
}

void FakeSourceGate::record_success(const Source& source, std::int64_t lease, const Success& success) {
    unlock(source.id);
    Row& row = rows[source.id];
    if (lease != row.lease || lease == row.closed_lease) return;
    row.closed_lease = lease;
    row.drained = success.drained;
    row.empty_streak = success.drained ? row.empty_streak + 1 : 0;
    row.backlog = success.backlog;
    row.next_allowed = clock_.now() + success.pause;
    row.failures = 0;
    row.state = "ok";
    ++successes;
}

void FakeSourceGate::release_slot(const Source& source, std::int64_t lease) {
    unlock(source.id);
    Row& row = rows[source.id];
    if (lease != row.lease || lease == row.closed_lease) return;
    row.closed_lease = lease;
    row.next_allowed = clock_.now() + source.interval;
}

void FakeSourceGate::record_failure(const Source& source, std::int64_t lease, Failure kind, const std::string& error,
                                    std::chrono::milliseconds delay) {
    unlock(source.id);  // also when the connection is lost: the lock dies with it
    if (lose_next_close == CloseLoss::before) {
        lose_next_close = CloseLoss::none;
        throw DatabaseUnavailable("fake: connection lost before the close");
    }
    Row& row = rows[source.id];
    if (lease != row.lease || lease == row.closed_lease) return;
    row.closed_lease = lease;
    row.next_allowed = clock_.now() + delay;
    ++row.failures;
    row.drained = false;
    row.state = kind == Failure::failing ? "failing" : kind == Failure::throttled ? "throttled" : "transient";
    row.last_error = error;
    ++failures;
    if (lose_next_close == CloseLoss::after) {
        lose_next_close = CloseLoss::none;
        throw DatabaseUnavailable("fake: connection lost after the close committed");
    }
}

EventStore::AppendResult FakeEventStore::append(int source_id, std::int64_t expected_cursor, const EventBatch& batch,
                                                const SourceGate::SlotSuccess* close) {
    ++appends;
    if (fail_next_append) {
        auto fail = std::move(fail_next_append);
        fail_next_append = nullptr;
        fail();
    }
    if (before_compare_and_set) before_compare_and_set(source_id);
    const auto result = store(source_id, expected_cursor, batch);
    if (close && gate) {
        Source source;
        source.id = close->source_id;
        source.interval = close->interval;
        gate->record_success(source, close->lease, close->success);
    }
    return result;
}

EventStore::AppendResult FakeEventStore::store(int source_id, std::int64_t expected_cursor, const EventBatch& batch) {
    if (cursors[source_id] != expected_cursor) return AppendResult::conflict;
    auto& stored = events[source_id];
    for (const auto& e : batch)
        if (std::any_of(stored.begin(), stored.end(), [&](const Event& s) { return s.id == e.id; }))
            return AppendResult::conflict;  // the unique key
    stored.insert(stored.end(), batch.begin(), batch.end());
    cursors[source_id] = batch.back().id;
    return AppendResult::appended;
}

FetchResult FakeEventFetcher::fetch(const Source& source, std::int64_t after_id, int limit) {
    ++fetches;
    if (throw_on_fetch) throw_on_fetch(source.id);
    auto& script = scripted[source.id];
    if (!script.empty()) {
        auto result = std::move(script.front());
        script.pop_front();
        return result;
    }
    EventBatch batch;
    for (const auto& e : available[source.id])
        if (e.id > after_id && static_cast<int>(batch.size()) < limit) batch.push_back(e);
    return FetchResult::batch(std::move(batch));
}

void FakeEventFetcher::produce(int source_id, std::int64_t first_id, std::int64_t count) {
    for (std::int64_t id = first_id; id < first_id + count; ++id)
        available[source_id].push_back({id, "{\"n\":" + std::to_string(id) + "}"});
}

SourceSchedule FakeSourceCatalog::schedule(const ScheduleShare& share) {
    SourceSchedule schedule;
    for (const auto& source : sources) {
        const auto row = gate_ ? gate_->rows.find(source.id) : decltype(gate_->rows.end()){};
        if (!gate_ || row == gate_->rows.end()) {
            schedule.due.push_back(source);  // never asked: due for anyone
            continue;
        }
        const auto due_for_us =
            row->second.next_allowed + (share.owns(source.id) ? Clock::duration::zero() : share.take_over_after);
        if (clock_->now() >= due_for_us) {
            schedule.due.push_back(source);
            continue;
        }
        const auto wait = std::chrono::ceil<std::chrono::milliseconds>(due_for_us - clock_->now());
        schedule.next_due_in = std::min(schedule.next_due_in.value_or(wait), wait);
        if (!row->second.drained && row->second.failures == 0 && row->second.lease == row->second.closed_lease)
            ++schedule.pending;
    }
    return schedule;
}

Source& FakeSourceCatalog::add(int id, const std::string& name) {
    Source s;
    s.id = id;
    s.name = name;
    s.endpoint.url = "fake://" + name;
    sources.push_back(s);
    return sources.back();
}

}  // namespace tributary::fakes
