#include "support/fakes.h"

#include <algorithm>
#include <stdexcept>

#include "core/errors.h"

namespace tributary::fakes {

SourceTurn::Claim FakeSourceTurn::claim(const Source& source) {
    ++claims;
    if (fail_claim) {
        lose_session();
        throw DatabaseUnavailable("fake: database away");
    }
    Claim claim;
    const auto holder = db_.lock_holder.find(source.id);
    if (holder != db_.lock_holder.end() && holder->second != worker_) {
        claim.decision = Decision::locked;
        return claim;
    }
    auto& gate = db_.gates[source.id];
    claim.consecutive_failures = gate.failures;
    claim.drained = gate.drained;
    claim.empty_streak = gate.empty_streak;
    if (clock_.now() < gate.next_allowed) {
        claim.decision = gate.failures > 0 ? Decision::backing_off : Decision::not_due;
    } else {
        db_.lock_holder[source.id] = worker_;
        ++locks_taken;
        ++passes;
        gate.next_allowed = clock_.now() + source.endpoint.timeout + source.interval;
        claim.decision = Decision::pass;
        claim.lease = ++gate.lease;
        if (source.keyed_by_id()) {
            claim.cursor = Cursor::at_id(db_.cursors[source.id]);
        } else {
            const auto at = db_.positions.find(source.id);
            claim.cursor = at == db_.positions.end() ? Cursor::at("") : at->second;
        }
    }
    if (after_claim) after_claim();
    return claim;
}

bool FakeSourceTurn::holds(int source_id) const {
    const auto holder = db_.lock_holder.find(source_id);
    return holder != db_.lock_holder.end() && holder->second == worker_;
}

void FakeSourceTurn::unlock(int source_id) {
    if (!holds(source_id)) return;
    db_.lock_holder.erase(source_id);
    ++locks_released;
}

void FakeSourceTurn::lose_session() {
    for (auto it = db_.lock_holder.begin(); it != db_.lock_holder.end();) {
        if (it->second == worker_) {
            it = db_.lock_holder.erase(it);
            ++locks_released;
        } else {
            ++it;
        }
    }
}

void FakeSourceTurn::apply(const Source& source, const SlotClose& close) {
    auto& gate = db_.gates[source.id];
    if (close.lease != gate.lease || close.lease == gate.closed_lease) return;
    gate.closed_lease = close.lease;
    switch (close.kind) {
        case SlotClose::Kind::released: gate.next_allowed = clock_.now() + source.interval; return;
        case SlotClose::Kind::succeeded:
            gate.drained = close.drained;
            gate.empty_streak = close.drained ? gate.empty_streak + 1 : 0;
            gate.backlog = close.backlog;
            gate.next_allowed = clock_.now() + close.pause;
            gate.failures = 0;
            gate.state = "ok";
            ++successes;
            return;
        case SlotClose::Kind::failed:
            gate.next_allowed = clock_.now() + close.pause;
            ++gate.failures;
            gate.drained = false;
            gate.state = close.failure == SlotClose::Failure::failing     ? "failing"
                         : close.failure == SlotClose::Failure::throttled ? "throttled"
                                                                          : "transient";
            gate.last_error = close.error;
            ++failures;
            return;
    }
}

void FakeSourceTurn::close(const Source& source, const SlotClose& close) {
    if (close.kind == SlotClose::Kind::failed && lose_next_close == CloseLoss::before) {
        lose_next_close = CloseLoss::none;
        lose_session();
        throw DatabaseUnavailable("fake: connection lost before the close");
    }
    apply(source, close);
    unlock(source.id);  // last, as the real closes do
    if (close.kind == SlotClose::Kind::failed && lose_next_close == CloseLoss::after) {
        lose_next_close = CloseLoss::none;
        lose_session();
        throw DatabaseUnavailable("fake: connection lost after the close committed");
    }
}

SourceTurn::Appended FakeSourceTurn::append_and_close(const Source& source, const Claim& claim, EventBatch batch,
                                                      Progress progress) {
    ++appends;
    if (fail_next_append) {
        auto fail = std::move(fail_next_append);
        fail_next_append = nullptr;
        try {
            fail();
        } catch (const DatabaseUnavailable&) {
            lose_session();
            throw;
        }
    }
    for (const auto& event : batch)
        if (event.payload.find("\\u0000") != std::string::npos)
            throw BatchRejected("fake: unsupported Unicode escape sequence");
    if (before_compare_and_set) before_compare_and_set(source.id);
    const auto pause = std::max(progress.pause, source.interval);
    Appended appended{Stored::conflict, 0};
    if (source.keyed_by_id()) {
        if (store(source.id, claim.cursor.id(), batch)) appended.stored = Stored::appended;
    } else if (const auto skipped = store_keyed(source.id, claim.cursor, *progress.next, batch)) {
        appended = {Stored::appended, *skipped};
    }
    const bool nothing_new = appended.stored == Stored::appended && appended.skipped >= batch.size() && progress.next &&
                             *progress.next == claim.cursor;
    if (nothing_new)
        apply(source, SlotClose::succeeded(claim.lease, true, progress.backlog, std::max(progress.idle_pause, pause)));
    else apply(source, SlotClose::succeeded(claim.lease, progress.drained, progress.backlog, pause));
    unlock(source.id);
    return appended;
}

std::optional<std::size_t> FakeSourceTurn::store_keyed(int source_id, const Cursor& expected, const Cursor& next,
                                                       const EventBatch& batch) {
    const auto at = db_.positions.find(source_id);
    const Cursor current = at == db_.positions.end() ? Cursor::at("") : at->second;
    if (current != expected) return std::nullopt;
    auto& stored = db_.events[source_id];
    std::size_t skipped = 0;
    for (const auto& e : batch) {
        if (std::any_of(stored.begin(), stored.end(), [&](const Event& s) { return s.key == e.key; })) {
            ++skipped;  // the unique key: seen before, left out
            continue;
        }
        stored.push_back(e);
    }
    db_.positions[source_id] = next;
    return skipped;
}

bool FakeSourceTurn::store(int source_id, std::int64_t expected, const EventBatch& batch) {
    if (db_.cursors[source_id] != expected) return false;
    auto& stored = db_.events[source_id];
    for (const auto& e : batch)
        if (std::any_of(stored.begin(), stored.end(), [&](const Event& s) { return s.id == e.id; }))
            return false;  // the unique key
    stored.insert(stored.end(), batch.begin(), batch.end());
    db_.cursors[source_id] = batch.back().id;
    return true;
}

FetchResult FakeEventFetcher::fetch(const Source& source, const Cursor& cursor, int limit) {
    ++fetches;
    if (throw_on_fetch) throw_on_fetch(source.id);
    auto& script = scripted[source.id];
    if (!script.empty()) {
        auto result = std::move(script.front());
        script.pop_front();
        return result;
    }
    EventBatch batch;
    if (!source.keyed_by_id()) {
        const auto& all = available[source.id];
        const std::size_t from = cursor.position().empty() ? 0 : std::stoul(cursor.position());
        for (std::size_t i = from; i < all.size() && static_cast<int>(batch.size()) < limit; ++i) {
            batch.push_back(all[i]);
            if (batch.back().key.empty()) batch.back().key = std::to_string(all[i].id);
        }
        auto result = FetchResult::batch(std::move(batch));
        result.next = Cursor::at(std::to_string(from + result.events.size()));
        return result;
    }
    for (const auto& e : available[source.id])
        if (e.id > cursor.id() && static_cast<int>(batch.size()) < limit) batch.push_back(e);
    return FetchResult::batch(std::move(batch));
}

void FakeEventFetcher::produce(int source_id, std::int64_t first_id, std::int64_t count) {
    for (std::int64_t id = first_id; id < first_id + count; ++id)
        available[source_id].push_back({id, "{\"n\":" + std::to_string(id) + "}"});
}

SourceSchedule FakeSourceCatalog::schedule(const ScheduleShare& share) {
    SourceSchedule schedule;
    for (const auto& source : sources) {
        const auto row = db_ ? db_->gates.find(source.id) : decltype(db_->gates.end()){};
        if (!db_ || row == db_->gates.end()) {
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
