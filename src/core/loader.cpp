#include "loader.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "errors.h"
#include "fault_points.h"
#include "page_taking.h"

namespace tributary {

namespace {

FailureClass failure_class(FetchResult::Cause cause) {
    switch (cause) {
        case FetchResult::Cause::http_status: return FailureClass::http_status;
        case FetchResult::Cause::invalid_batch: return FailureClass::invalid_batch;
        case FetchResult::Cause::network:
        case FetchResult::Cause::none: break;
    }
    return FailureClass::network;
}

SlotClose::Failure slot_failure(FetchResult::Status status) {
    switch (status) {
        case FetchResult::Status::throttled: return SlotClose::Failure::throttled;
        case FetchResult::Status::failing: return SlotClose::Failure::failing;
        default: return SlotClose::Failure::transient;
    }
}

}  // namespace

const char* to_string(FailureClass c) {
    switch (c) {
        case FailureClass::none: return "none";
        case FailureClass::network: return "network";
        case FailureClass::http_status: return "http_status";
        case FailureClass::invalid_batch: return "invalid_batch";
        case FailureClass::store: return "store";
    }
    return "unknown";
}

const char* to_string(StoreConflict c) {
    switch (c) {
        case StoreConflict::none: return "none";
        case StoreConflict::cursor_moved: return "cursor_moved";
        case StoreConflict::duplicate_ids: return "duplicate_ids";
    }
    return "unknown";
}

const char* to_string(SourceOutcome outcome) {
    switch (outcome) {
        case SourceOutcome::stored: return "stored";
        case SourceOutcome::empty: return "empty";
        case SourceOutcome::failed: return "failed";
        case SourceOutcome::conflict: return "conflict";
        case SourceOutcome::locked: return "locked";
        case SourceOutcome::not_due: return "not_due";
        case SourceOutcome::backing_off: return "backing_off";
        case SourceOutcome::stopped: return "stopped";
    }
    return "unknown";
}

void PassSummary::add(const TurnReport& turn) {
    ++sources;
    events_stored += turn.events;
    switch (turn.outcome) {
        case SourceOutcome::stored: ++stored; break;
        case SourceOutcome::empty: ++empty; break;
        case SourceOutcome::failed: ++failed; break;
        case SourceOutcome::conflict: ++conflict; break;
        case SourceOutcome::locked: ++locked; break;
        case SourceOutcome::not_due: ++not_due; break;
        case SourceOutcome::backing_off: ++backing_off; break;
        case SourceOutcome::stopped: break;
    }
}

Loader::Loader(Ports ports, LoaderOptions options, const StopSignal& stop, LoaderObserver& observer)
    : ports_(ports),
      options_(std::move(options)),
      stop_(stop),
      observer_(observer),
      backoff_(options_.backoff),
      idle_polling_(options_.idle_poll_cap) {}

PassSummary Loader::run_once() {
    close_abandoned_slot();
    auto schedule = ports_.catalog.schedule(share());
    PassSummary summary;
    summary.pending = schedule.pending;
    summary.next_due_in = schedule.next_due_in;
    soonest_due_in_.reset();
    const auto sources = visiting_order(schedule);
    if (sources.size() < schedule.due.size()) {
        // Others' overdue sources, left to their owners for this pass: due
        // now, so look again straight after it, and not idle yet.
        summary.next_due_in = std::chrono::milliseconds(0);
        summary.pending += schedule.due.size() - sources.size();
    }
    if (sources.empty()) return summary;
    for (const Source* next : sources) {
        if (stop_.stop_requested()) break;
        const Source& source = *next;
        TurnReport turn{SourceOutcome::failed};
        try {
            turn = load_source(source);
        } catch (const DatabaseUnavailable&) {
            throw;  // the whole pass is moot; run() waits for the database
        } catch (const PermissionDenied&) {
            throw;  // no source can be loaded without the role: the worker stops
        } catch (const std::exception& e) {
            // A bug or an unexpected library error must not stop the others.
            spdlog::warn("source={} worker={} unexpected error, skipped this pass: {}", source.name, options_.worker,
                         e.what());
        }
        summary.add(turn);
        observer_.turn_done(source, turn);
    }
    // The sources asked in this pass were given their next time just now.
    if (soonest_due_in_)
        summary.next_due_in = std::min(summary.next_due_in.value_or(*soonest_due_in_), *soonest_due_in_);
    return summary;
}

TurnReport Loader::load_source(const Source& source) {
    // The lease starts when the database runs the claim, a moment after this.
    const auto claimed_at = ports_.clock.now();
    const auto claim = ports_.turn.claim(source);
    if (claim.decision == SourceTurn::Decision::locked) note_locked(source);
    else note_not_locked(source);
    switch (claim.decision) {
        case SourceTurn::Decision::locked: return {SourceOutcome::locked};
        // Asked lately, by any worker of any process, and it had nothing then:
        // as good as asked now, for deciding that everything is loaded.
        case SourceTurn::Decision::not_due: return {claim.drained ? SourceOutcome::empty : SourceOutcome::not_due};
        case SourceTurn::Decision::backing_off: return {SourceOutcome::backing_off};
        case SourceTurn::Decision::pass: break;
    }
    // From here on this worker holds the source; every path closes the slot,
    // and the close lets the lock go.
    try {
        return fetch_and_store(source, claim, claimed_at);
    } catch (const DatabaseUnavailable&) {
        abandon_slot(source, claim.lease);
        throw;
    } catch (const PermissionDenied&) {
        abandon_slot(source, claim.lease);
        throw;
    } catch (const std::exception& e) {
        // The slot is reserved: close it with a backoff and a visible cause,
        // rather than leaving the source leased and "ok" in status.
        try {
            return record_failure(
                source, claim,
                FetchResult::failure(FetchResult::Status::transient, std::string("database error: ") + e.what()),
                FailureClass::store);
        } catch (const DatabaseUnavailable&) {
            abandon_slot(source, claim.lease);
            throw;
        }
    }
}

void Loader::note_locked(const Source& source) {
    const auto now = ports_.clock.now();
    auto& streak = locked_.try_emplace(source.id, LockedStreak{now, {}, false}).first->second;
    // Loaders hold a source for one request at most: only a lock that stays
    // is worth a look, and then once per period, not at every claim.
    if (now - streak.since < options_.stranger_check_after) return;
    if (streak.checked && now - *streak.checked < options_.stranger_check_every) return;
    streak.checked = now;
    const auto holder = ports_.turn.stranger_holding(source);
    if (holder) {
        spdlog::warn(
            "source={} worker={} locked by a session that is not a tributary loader ({}): pid {}, user {}, "
            "application '{}', since {}; no loader can ask this source until that session unlocks or ends "
            "(SELECT pg_terminate_backend({}))",
            source.name, options_.worker, holder->why, holder->pid, holder->user, holder->application,
            holder->since.empty() ? "unknown" : holder->since, holder->pid);
    }
    if (holder || streak.stranger) observer_.lock_stranger(source, holder);
    streak.stranger = holder.has_value();
}

void Loader::note_not_locked(const Source& source) {
    const auto found = locked_.find(source.id);
    if (found == locked_.end()) return;
    if (found->second.stranger) {
        spdlog::info("source={} worker={} no longer locked by a stranger", source.name, options_.worker);
        observer_.lock_stranger(source, std::nullopt);
    }
    locked_.erase(found);
}

void Loader::abandon_slot(const Source& source, std::int64_t lease) {
    // The slot stays leased (up to the request timeout and more) unless we
    // close it once the database is back: as intended, if the close itself
    // was cut short, else released at the interval.
    abandoned_slot_ = closing_ ? *closing_ : PendingClose{source, SlotClose::released(lease)};
    closing_.reset();
}

TurnReport Loader::fetch_and_store(const Source& source, const SourceTurn::Claim& claim, Clock::time_point claimed_at) {
    const auto fetch_start = ports_.clock.now();
    if (fetch_start - claimed_at > options_.max_start_delay) {
        // Our lease may have run out and the source be someone else's now: a
        // request from us could reach it too soon after theirs.
        spdlog::warn("source={} worker={} stalled {} ms between the claim and the request; request abandoned",
                     source.name, options_.worker,
                     std::chrono::duration_cast<std::chrono::milliseconds>(fetch_start - claimed_at).count());
        close_slot(source, SlotClose::released(claim.lease));
        return {SourceOutcome::conflict};
    }
    FetchResult result;
    try {
        // Checked again by the fetcher at the last moment before it sends.
        ports_.fetcher.send_no_later_than(claimed_at + options_.max_start_delay);
        result = ports_.fetcher.fetch(source, claim.cursor, source.batch_size);
    } catch (const std::exception& e) {
        result = FetchResult::failure(FetchResult::Status::transient, std::string("fetch error: ") + e.what())
                     .because(FetchResult::Cause::network);
    }
    const auto fetch_time = ports_.clock.now() - fetch_start;
    if (result.status == FetchResult::Status::stopped) {
        close_slot(source, SlotClose::released(claim.lease));
        return {SourceOutcome::stopped};
    }
    if (result.status == FetchResult::Status::late) {
        spdlog::warn("source={} worker={} {}; request abandoned", source.name, options_.worker, result.error);
        close_slot(source, SlotClose::released(claim.lease));
        return {SourceOutcome::conflict};
    }
    TurnReport report{SourceOutcome::failed};
    if (result.status != FetchResult::Status::ok) {
        report = record_failure(source, claim, result, failure_class(result.cause));
    } else if (auto why = page_violation(source, claim.cursor, result.events)) {
        // The fetcher validated already; checking again here keeps the
        // promise even for a fetcher that gets it wrong.
        report = record_failure(source, claim, FetchResult::failure(FetchResult::Status::failing, *why),
                                FailureClass::invalid_batch);
    } else {
        report = store_batch(source, claim, result);
    }
    report.fetch_time = fetch_time;
    return report;
}

namespace {

/// A cursor for log lines (shown_cursor_text: no query, at most 80 bytes).
std::string shown_cursor(const Cursor& cursor) { return shown_cursor_text(cursor.to_string()); }

}  // namespace

TurnReport Loader::store_batch(const Source& source, const SourceTurn::Claim& claim, FetchResult& result) {
    const Cursor next = take_page(source, claim.cursor, result);
    const auto id_of = [](const Cursor& c) { return c.is_id() ? std::optional<std::int64_t>(c.id()) : std::nullopt; };
    if (result.events.empty() && next == claim.cursor) {
        const auto pause = std::max(idle_polling_.pause(source.interval, claim.empty_streak + 1), result.hold_off);
        close_slot(source, SlotClose::succeeded(claim.lease, true, result.backlog, pause));
        note_next_due(pause);
        return {SourceOutcome::empty, 0, FailureClass::none, {}, {}, id_of(claim.cursor), result.backlog};
    }

    fault_point("after_fetch");
    const std::size_t count = result.events.size();
    SourceTurn::Progress progress(result.backlog);
    progress.next = next;
    progress.pause = std::max(source.interval, result.hold_off);
    progress.drained = count == 0 && result.at_end;
    progress.idle_pause = std::max(idle_polling_.pause(source.interval, claim.empty_streak + 1), result.hold_off);
    const auto append_start = ports_.clock.now();
    SourceTurn::Appended stored;
    try {
        // The batch closes its own slot: one commit ends the turn.
        stored = ports_.turn.append_and_close(source, claim, std::move(result.events), progress);
    } catch (const BatchRejected& e) {
        return record_failure(source, claim,
                              FetchResult::failure(FetchResult::Status::failing,
                                                   std::string("PostgreSQL refused the batch: ") + e.what()),
                              FailureClass::store);
    }
    const auto append_time = ports_.clock.now() - append_start;
    if (stored == SourceTurn::Stored::appended) fault_point("after_commit");
    // Every record known and the cursor where it was (the last record of a
    // time source, asked again since its watermark): nothing new, and the
    // store closed the slot as idle.
    const bool moved = !(next == claim.cursor);
    const bool nothing_new = stored == SourceTurn::Stored::appended && stored.skipped >= count && !moved;
    note_next_due(nothing_new ? progress.idle_pause : progress.pause);
    if (stored == SourceTurn::Stored::conflict) {
        spdlog::warn(
            "source={} worker={} store conflict (cursor_moved): the cursor moved from {} under another "
            "writer while this worker held the source; batch dropped, will re-read",
            source.name, options_.worker, shown_cursor(claim.cursor));
        TurnReport report{SourceOutcome::conflict};
        report.store_conflict = StoreConflict::cursor_moved;
        return report;
    }
    if (stored == SourceTurn::Stored::duplicate) {
        spdlog::warn(
            "source={} worker={} store conflict (duplicate_ids): ids up to {} after cursor {} were already "
            "stored by another writer; batch dropped, the cursor stays (does the source rewrite history, "
            "or does a writer bypass the loader?)",
            source.name, options_.worker, shown_cursor(next), shown_cursor(claim.cursor));
        TurnReport report{SourceOutcome::conflict};
        report.store_conflict = StoreConflict::duplicate_ids;
        return report;
    }
    const std::size_t stored_count = count - std::min(count, stored.skipped);
    spdlog::debug("source={} worker={} stored {} events ({} seen before), cursor {} -> {}", source.name,
                  options_.worker, stored_count, stored.skipped, shown_cursor(claim.cursor), shown_cursor(next));
    // A page seen before that moved the cursor (a rewind re-reading what is stored) is progress
    // too: the pages after it may hold new records, so the pass is not idle.
    return {nothing_new ? SourceOutcome::empty : SourceOutcome::stored,
            stored_count,
            FailureClass::none,
            {},
            append_time,
            id_of(next),
            result.backlog};
}

TurnReport Loader::record_failure(const Source& source, const SourceTurn::Claim& claim, const FetchResult& result,
                                  FailureClass failure) {
    const int failures = claim.consecutive_failures + 1;
    std::chrono::milliseconds delay;
    switch (result.status) {
        case FetchResult::Status::throttled: delay = result.retry_after; break;
        case FetchResult::Status::failing: delay = backoff_.failing(failures); break;
        default: delay = backoff_.transient(failures); break;
    }
    delay = std::max(delay, source.interval);
    spdlog::warn("source={} worker={} fetch {} (failure {} in a row), next try in {} ms: {}", source.name,
                 options_.worker, to_string(result.status), failures, delay.count(), result.error);
    close_slot(source, SlotClose::failed(claim.lease, slot_failure(result.status), result.error, delay));
    note_next_due(delay);
    TurnReport report{SourceOutcome::failed};
    report.failure = failure;
    return report;
}

void Loader::report_progress(const PassSummary& summary) {
    events_since_report_ += summary.events_stored;
    const auto now = ports_.clock.now();
    if (now - last_report_ < options_.progress_every) return;
    if (events_since_report_ > 0)
        spdlog::info("worker={} stored {} events in the last {} s", options_.worker, events_since_report_,
                     std::chrono::duration_cast<std::chrono::seconds>(now - last_report_).count());
    events_since_report_ = 0;
    last_report_ = now;
}

std::vector<const Source*> Loader::visiting_order(const SourceSchedule& schedule) {
    // Our own sources, earliest due first. Only a worker with none of its
    // own due helps busy ones, from a different place each pass so that
    // several helpers spread out: a worker that is busy itself would only
    // race the owners (when all are overloaded, every source is overdue),
    // and by the time it got there its schedule would be stale.
    const auto mine = share();
    std::vector<const Source*> own, others;
    for (const auto& source : schedule.due) (mine.owns(source.id) ? own : others).push_back(&source);
    if (!own.empty() || others.empty()) return own;
    std::rotate(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(pass_count_++ % others.size()),
                others.end());
    return others;
}

void Loader::close_slot(const Source& source, SlotClose close) {
    closing_ = PendingClose{source, std::move(close)};
    ports_.turn.close(closing_->source, closing_->close);
    closing_.reset();
}

void Loader::close_abandoned_slot() {
    if (!abandoned_slot_) return;
    // Named by its lease: if the lease ran out and another worker took the
    // source meanwhile, or the close did commit before the connection died,
    // this changes nothing.
    ports_.turn.close(abandoned_slot_->source, abandoned_slot_->close);
    abandoned_slot_.reset();
}

void Loader::note_next_due(std::chrono::milliseconds pause) {
    soonest_due_in_ = std::min(soonest_due_in_.value_or(pause), pause);
}

std::chrono::milliseconds Loader::sleep_after(const PassSummary& summary) const {
    using std::chrono::milliseconds;
    // A source the gate refused in this pass (another worker got there
    // first) is due again within its interval: look again soon.
    if (summary.not_due > 0 || summary.conflict > 0) return std::min(options_.schedule_refresh, milliseconds(20));
    // Straight on after work when nothing says when the next is due; the
    // schedule is one statement, but not one to run for every source.
    if (!summary.next_due_in) return summary.did_work() ? milliseconds(0) : options_.schedule_refresh;
    const auto floor = summary.did_work() ? milliseconds(0) : milliseconds(1);
    return std::clamp(*summary.next_due_in, floor, options_.schedule_refresh);
}

void Loader::run(bool until_idle) {
    last_report_ = ports_.clock.now();
    IdlePause outage(options_.outage_min, options_.outage_max);
    bool database_away = false;
    while (!stop_.stop_requested()) {
        PassSummary summary;
        try {
            summary = run_once();
        } catch (const DatabaseUnavailable& e) {
            // The observer says it once per process; each worker just waits.
            if (!database_away) observer_.database_changed(false, e.what());
            database_away = true;
            ports_.clock.sleep_for(outage.next());
            continue;
        } catch (const PermissionDenied&) {
            throw;  // retrying grants nothing; `run` refuses at start, this is a grant revoked since
        } catch (const std::exception& e) {
            // E.g. the source list locked by a migration: wait and try again;
            // a worker that gave up would silently shrink the process.
            const auto pause = outage.next();
            spdlog::error("worker={} pass failed, retrying in {} ms: {}", options_.worker, pause.count(), e.what());
            ports_.clock.sleep_for(pause);
            continue;
        }
        if (database_away) observer_.database_changed(true, {});
        database_away = false;
        outage.reset();
        observer_.pass_done(summary);
        report_progress(summary);
        if (stop_.stop_requested() || (until_idle && summary.caught_up())) break;
        const auto pause = sleep_after(summary);
        if (pause.count() == 0) continue;
        if (!summary.did_work()) observer_.idle_sleep(pause);
        ports_.clock.sleep_for(pause);
    }
}

}  // namespace tributary
