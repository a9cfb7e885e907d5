#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backoff.h"
#include "clock.h"
#include "event_fetcher.h"
#include "idle_pause.h"
#include "idle_polling.h"
#include "loader_observer.h"
#include "slot_close.h"
#include "source_catalog.h"
#include "source_turn.h"
#include "stop_signal.h"

namespace tributary {

/// Totals of one pass over the enabled sources.
struct PassSummary {
    std::size_t sources = 0;
    std::size_t events_stored = 0;
    std::size_t stored = 0, empty = 0, failed = 0, conflict = 0, locked = 0, not_due = 0, backing_off = 0;
    /// Sources not due at the start of the pass that had events last time.
    std::size_t pending = 0;
    /// When the next source that was not due becomes due.
    std::optional<std::chrono::milliseconds> next_due_in;

    void add(const TurnReport& turn);
    bool did_work() const { return stored > 0; }
    /// Nothing left to do for this worker: every source was asked lately and
    /// had nothing, or is failing, or is another worker's.
    bool caught_up() const { return stored == 0 && conflict == 0 && not_due == 0 && pending == 0; }
};

struct LoaderOptions {
    std::string worker;  ///< name in log lines, e.g. "w1"
    int worker_index = 0;
    int worker_count = 1;
    BackoffPolicy backoff;
    /// The longest a worker sleeps before reading the schedule again, also
    /// when no source is due sooner (new sources, resumed ones).
    std::chrono::milliseconds schedule_refresh{1000};
    /// A worker asks a due source that another worker of this process owns
    /// once it has been due this long (its owner is busy).
    std::chrono::milliseconds take_over_after{250};
    /// Empty answers in a row stretch a source's pause up to this.
    std::chrono::milliseconds idle_poll_cap{60000};
    /// Pause after the database became unreachable, doubling up to the cap.
    std::chrono::milliseconds outage_min{500};
    std::chrono::milliseconds outage_max{10000};
    /// A request must start within this long of passing the gate: the gate's
    /// lease covers the request's timeout plus a margin for what comes
    /// before it (see PostgresSourceTurn), and a worker that stalled longer
    /// (paused, swapped out) may have lost the source to another.
    std::chrono::milliseconds max_start_delay{4000};
    /// How often a working loader logs what it stored.
    std::chrono::seconds progress_every{10};
    /// A source this worker found locked on every claim for this long is
    /// looked into: is the holder a loader at all? Then again at most once
    /// per `stranger_check_every`, which is also how often a stranger's
    /// lock is logged.
    std::chrono::milliseconds stranger_check_after{1000};
    std::chrono::milliseconds stranger_check_every{60000};
};

/// The per-source pass of docs/design.md §5 over all enabled sources, one
/// SourceTurn each: claim (lock, gate, cursor) → fetch → append-and-close
/// (batch, cursor, slot and lock in one transaction) or close alone. Nothing a source
/// does stops the loop; only a stop, a limit, or the database being away for
/// good (it keeps retrying) changes its course. One Loader per worker; its
/// ports are that worker's own (one database session, one HTTP handle).
class Loader {
public:
    struct Ports {
        SourceCatalog& catalog;
        SourceTurn& turn;
        EventFetcher& fetcher;
        Clock& clock;
    };

    Loader(Ports ports, LoaderOptions options, const StopSignal& stop, LoaderObserver& observer = no_observer());

    /// One pass over the sources that are due. Throws DatabaseUnavailable when
    /// the database is away (the pass is abandoned; nothing was half-stored),
    /// PermissionDenied when it refuses this role a privilege.
    PassSummary run_once();

    /// Passes until stopped (a deadline is a stop too) or, with `until_idle`,
    /// until a pass finds nothing to do; sleeps until the next source is due.
    /// Throws PermissionDenied: without its privileges a worker loads nothing.
    void run(bool until_idle);

    /// One source's turn (exposed for tests).
    TurnReport load_source(const Source& source);

private:
    TurnReport fetch_and_store(const Source& source, const SourceTurn::Claim& claim, Clock::time_point claimed_at);
    TurnReport store_batch(const Source& source, const SourceTurn::Claim& claim, FetchResult& result);
    TurnReport record_failure(const Source& source, const SourceTurn::Claim& claim, const FetchResult& result,
                              FailureClass failure);
    void report_progress(const PassSummary& summary);
    std::chrono::milliseconds sleep_after(const PassSummary& summary) const;
    void note_next_due(std::chrono::milliseconds pause);
    std::vector<const Source*> visiting_order(const SourceSchedule& schedule);
    /// This worker's part of the due sources.
    ScheduleShare share() const { return {options_.worker_index, options_.worker_count, options_.take_over_after}; }

    /// A close and the source it is for. Kept while the close is under way:
    /// if the database goes away meanwhile, the same close is replayed once
    /// it answers again (closes apply once per lease), so a backoff or
    /// Retry-After is never lost to an outage.
    struct PendingClose {
        Source source;
        SlotClose close;
    };
    /// Claims of one source that found it locked, in a row.
    struct LockedStreak {
        Clock::time_point since;
        std::optional<Clock::time_point> checked;  ///< when the holder was last looked into
        bool stranger = false;                     ///< what that found
    };
    void note_locked(const Source& source);
    void note_not_locked(const Source& source);

    void close_slot(const Source& source, SlotClose close);
    void abandon_slot(const Source& source, std::int64_t lease);
    void close_abandoned_slot();

    Ports ports_;
    LoaderOptions options_;
    const StopSignal& stop_;
    LoaderObserver& observer_;
    Backoff backoff_;
    IdlePolling idle_polling_;
    /// The soonest next request this worker set at a gate in the current pass.
    std::optional<std::chrono::milliseconds> soonest_due_in_;
    std::optional<PendingClose> closing_;         ///< the close under way, if any
    std::optional<PendingClose> abandoned_slot_;  ///< a close the database's going away cut short
    std::map<int, LockedStreak> locked_;          ///< by source id
    std::size_t pass_count_ = 0;
    std::size_t events_since_report_ = 0;
    Clock::time_point last_report_{};
};

}  // namespace tributary
