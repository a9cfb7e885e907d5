#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "backoff.h"
#include "clock.h"
#include "event_fetcher.h"
#include "event_store.h"
#include "idle_pause.h"
#include "idle_polling.h"
#include "loader_observer.h"
#include "source_catalog.h"
#include "source_gate.h"
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
    /// before it (see PostgresSourceGate), and a worker that stalled longer
    /// (paused, swapped out) may have lost the source to another.
    std::chrono::milliseconds max_start_delay{4000};
    /// How often a working loader logs what it stored.
    std::chrono::seconds progress_every{10};
};

/// The per-source pass of DESIGN.md §5 over all enabled sources:
/// claim (lock, gate, cursor) → fetch → append, closing the slot and releasing
/// the lock in the same transaction (or close the slot alone). Nothing a source
/// does stops the loop; only a stop, a limit, or the database being away for
/// good (it keeps retrying) changes its course. One Loader per worker; its
/// ports are that worker's own (one database session, one HTTP handle).
class Loader {
public:
    struct Ports {
        SourceCatalog& catalog;
        SourceGate& gate;
        EventStore& store;
        EventFetcher& fetcher;
        Clock& clock;
    };

    Loader(Ports ports, LoaderOptions options, const StopSignal& stop, LoaderObserver& observer = no_observer());

    /// One pass over the sources that are due. Throws DatabaseUnavailable when
    /// the database is away (the pass is abandoned; nothing was half-stored).
    PassSummary run_once();

    /// Passes until stopped (a deadline is a stop too) or, with `until_idle`,
    /// until a pass finds nothing to do; sleeps until the next source is due.
    void run(bool until_idle);

    /// One source's turn (exposed for tests).
    TurnReport load_source(const Source& source);

private:
    TurnReport fetch_and_store(const Source& source, const SourceGate::Pass& pass, Clock::time_point passed_at);
    TurnReport store_batch(const Source& source, const SourceGate::Pass& pass, std::int64_t cursor, FetchResult& result);
    void report_progress(const PassSummary& summary);
    std::chrono::milliseconds sleep_after(const PassSummary& summary) const;
    void note_next_due(std::chrono::milliseconds pause);
    void close_abandoned_slot();
    std::vector<const Source*> visiting_order(const SourceSchedule& schedule);
    /// This worker's part of the due sources.
    ScheduleShare share() const { return {options_.worker_index, options_.worker_count, options_.take_over_after}; }

    /// How a reserved gate slot is to be closed. Kept while the close is
    /// under way: if the database goes away meanwhile, the same close is
    /// replayed once it answers again (closes apply once per lease), so a
    /// backoff or Retry-After is never lost to an outage.
    struct SlotClose {
        enum class Kind { release, success, failure } kind = Kind::release;
        Source source;
        std::int64_t lease = 0;
        SourceGate::Success success;
        SourceGate::Failure failure = SourceGate::Failure::transient;
        std::string error;
        std::chrono::milliseconds delay{0};

        static SlotClose release(const Source& source, std::int64_t lease) {
            SlotClose c;
            c.source = source;
            c.lease = lease;
            return c;
        }
        static SlotClose succeeded(const Source& source, std::int64_t lease, SourceGate::Success success) {
            auto c = release(source, lease);
            c.kind = Kind::success;
            c.success = success;
            return c;
        }
        static SlotClose failed(const Source& source, std::int64_t lease, SourceGate::Failure failure,
                                std::string error, std::chrono::milliseconds delay) {
            auto c = release(source, lease);
            c.kind = Kind::failure;
            c.failure = failure;
            c.error = std::move(error);
            c.delay = delay;
            return c;
        }
    };
    void close_slot(SlotClose close);
    void abandon_slot(const Source& source, std::int64_t lease);
    void apply(const SlotClose& close);
    TurnReport record_failure(const Source& source, const SourceGate::Pass& pass, const FetchResult& result,
                              FailureClass failure);

    Ports ports_;
    LoaderOptions options_;
    const StopSignal& stop_;
    LoaderObserver& observer_;
    Backoff backoff_;
    IdlePolling idle_polling_;
    /// The soonest next request this worker set at a gate in the current pass.
    std::optional<std::chrono::milliseconds> soonest_due_in_;
    std::optional<SlotClose> closing_;         ///< the close under way, if any
    std::optional<SlotClose> abandoned_slot_;  ///< a close the database's going away cut short
    std::size_t pass_count_ = 0;
    std::size_t events_since_report_ = 0;
    Clock::time_point last_report_{};
};

}  // namespace tributary
