#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "backoff.h"
#include "clock.h"
#include "event_fetcher.h"
#include "event_store.h"
#include "idle_pause.h"
#include "source_catalog.h"
#include "source_gate.h"
#include "source_lock.h"
#include "stop_signal.h"

namespace tributary {

/// What one source's turn in a pass came to.
enum class SourceOutcome {
    stored,       ///< a batch was committed
    empty,        ///< the source had nothing new (now, or when last asked by anyone)
    failed,       ///< the fetch or the store failed; the source backs off
    conflict,     ///< another writer moved the cursor first; nothing stored
    locked,       ///< another worker holds the source
    not_due,      ///< the gate said "not yet" (interval)
    backing_off,  ///< the gate said "not yet" (the source failed lately)
    stopped,      ///< the process is stopping; the batch was abandoned
};

const char* to_string(SourceOutcome outcome);

/// One source's turn: its outcome and how many events it stored.
struct SourceTurn {
    SourceOutcome outcome = SourceOutcome::empty;
    std::size_t events = 0;
};

/// Totals of one pass over the enabled sources.
struct PassSummary {
    std::size_t sources = 0;
    std::size_t events_stored = 0;
    std::size_t stored = 0, empty = 0, failed = 0, conflict = 0, locked = 0, not_due = 0, backing_off = 0;

    void add(const SourceTurn& turn);
    bool did_work() const { return stored > 0; }
    /// Nothing left to do for this worker: every source was asked and had
    /// nothing, or is failing, or is another worker's.
    bool caught_up() const { return stored == 0 && conflict == 0 && not_due == 0; }
};

struct LoaderOptions {
    std::string worker;  ///< name in log lines, e.g. "w1"
    int worker_index = 0;
    int worker_count = 1;
    BackoffPolicy backoff;
    std::chrono::milliseconds idle_min{50};
    std::chrono::milliseconds idle_max{1000};
    /// Pause after the database became unreachable, doubling up to the cap.
    std::chrono::milliseconds outage_min{500};
    std::chrono::milliseconds outage_max{10000};
    /// How often a working loader logs what it stored.
    std::chrono::seconds progress_every{10};
};

/// The per-source pass of DESIGN.md §5 over all enabled sources:
/// lock → gate → cursor → fetch → atomic append → release. Nothing a source
/// does stops the loop; only a stop, a limit, or the database being away for
/// good (it keeps retrying) changes its course. One Loader per worker; its
/// ports are that worker's own (one database session, one HTTP handle).
class Loader {
public:
    struct Ports {
        SourceCatalog& catalog;
        SourceLock& lock;
        SourceGate& gate;
        EventStore& store;
        EventFetcher& fetcher;
        Clock& clock;
    };

    Loader(Ports ports, LoaderOptions options, const StopSignal& stop);

    /// One pass over the enabled sources. Throws DatabaseUnavailable when the
    /// database is away (the pass is abandoned; nothing was half-stored).
    PassSummary run_once();

    /// Passes until stopped (a deadline is a stop too) or, with `until_idle`,
    /// until a pass finds nothing to do; pauses while idle.
    void run(bool until_idle);

    /// One source's turn (exposed for tests).
    SourceTurn load_source(const Source& source);

private:
    SourceTurn fetch_and_store(const Source& source, int failures_before);
    void report_progress(const PassSummary& summary);
    SourceOutcome record_fetch_failure(const Source& source, const FetchResult& result, int failures);
    SourceOutcome record_rejection(const Source& source, const std::string& why, int failures);

    Ports ports_;
    LoaderOptions options_;
    const StopSignal& stop_;
    Backoff backoff_;
    IdlePause idle_;
    std::size_t pass_count_ = 0;
    std::size_t events_since_report_ = 0;
    Clock::time_point last_report_{};
};

}  // namespace tributary
