#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "cursor.h"
#include "event.h"
#include "lock_holder.h"
#include "slot_close.h"
#include "source.h"

namespace tributary {

/// A loader's turn at one source, as the database runs it (docs/design.md
/// §5): one claim, then exactly one close, either with a batch or alone.
///
///     claim ──► append_and_close   (events, cursor and close: one transaction)
///           └─► close              (succeeded | failed | released)
///
/// A claim that passes holds the source for this worker until its slot is
/// closed: the source's lock (a non-blocking mutual exclusion shared by all
/// loader processes) and a request slot leased for the request's whole
/// timeout, so at most one request per source is in flight anywhere, and the
/// next starts no sooner than the interval after the previous one ended (or
/// later: backoff, Retry-After). The lease names the slot: a close under a
/// stale lease (a worker that stalled while another took the source over)
/// and a close replayed after a lost connection change nothing. A lock may
/// be lost silently (its session died); the lease and the cursor's
/// compare-and-set keep that harmless.
///
/// Lock: whatever a close or append_and_close returns, and whenever close
/// throws, this worker no longer holds the source's lock. Only a refused
/// batch (BatchRejected) keeps it, with the slot open, for the caller to
/// close as a failure.
///
/// Errors: DatabaseUnavailable (the session is gone; a claim's lock went
/// with it, and whether a close committed is unknown: replay it once the
/// database answers), BatchRejected (append_and_close: PostgreSQL refused the
/// content; nothing stored, the slot still open). Not thread-safe: one per
/// worker, on that worker's own session.
class SourceTurn {
public:
    enum class Decision {
        pass,        ///< this worker holds the source; a request slot is reserved
        locked,      ///< another worker holds the source
        not_due,     ///< asked recently, by anyone: wait for the interval
        backing_off  ///< the source failed lately and is waiting out its backoff
    };

    struct Claim {
        Decision decision = Decision::not_due;
        int consecutive_failures = 0;  ///< before this request
        bool drained = false;          ///< the last request, by anyone, found nothing new
        int empty_streak = 0;          ///< answers in a row, by anyone, that had nothing new
        std::int64_t lease = 0;        ///< pass: names the slot
        Cursor cursor;                 ///< pass: read after the slot was reserved
    };

    enum class Stored {
        appended,   ///< the batch is committed and the cursor moved
        conflict,   ///< the cursor was not the claim's (another writer moved it):
                    ///< nothing stored (the slot is closed all the same)
        duplicate,  ///< the cursor was the claim's, but another writer had stored some
                    ///< of these ids behind it: nothing stored (the slot is closed all the same)
    };

    /// What append_and_close did. Compares equal to its `stored`.
    struct Appended {
        Stored stored = Stored::appended;
        /// appended, keyed by text: records of the batch whose key the source
        /// already had in the log (a page served again), left out.
        std::size_t skipped = 0;
        friend bool operator==(const Appended& a, Stored s) { return a.stored == s; }
        friend bool operator!=(const Appended& a, Stored s) { return a.stored != s; }
    };

    /// How a batch moves the source on, besides its events.
    struct Progress {
        Progress() = default;
        /// Just a backlog: an `after-id` batch, cursor to its last id.
        Progress(std::optional<std::int64_t> reported_backlog) : backlog(reported_backlog) {}  // NOLINT: implicit
        std::optional<std::int64_t> backlog;  ///< what the source said it still holds
        /// The cursor after the batch; empty: the batch's last id.
        std::optional<Cursor> next;
        /// No request before this has passed; at least the interval.
        std::chrono::milliseconds pause{0};
        /// The source said it had nothing more (an empty batch that only
        /// moves the cursor).
        bool drained = false;
        /// Keyed by text: when every record of the batch is stored already
        /// and the cursor does not move (nothing new after all), the slot
        /// closes as drained, no request before this (the idle pause).
        std::chrono::milliseconds idle_pause{0};
    };

    virtual ~SourceTurn() = default;

    /// Takes the source's lock and reserves the next request slot when the
    /// source is due, and reads its cursor. With any other decision the lock
    /// is not held.
    virtual Claim claim(const Source& source) = 0;

    /// Stores `batch` and moves the cursor to `progress.next` (or the
    /// batch's last id), if the cursor is still the claim's, and closes the
    /// slot as a success (next request after the pause, at least the
    /// interval; the backlog recorded): all in one transaction, committed
    /// durably. Keyed by id: the batch is non-empty, ids increasing, all
    /// after the claim's cursor, and one already stored fails it all
    /// (duplicate). Keyed by text: the batch may be empty (the cursor alone
    /// moves), and a record whose key is already stored is skipped. The
    /// batch is handed over, so that an adapter can move a large payload
    /// into its statement instead of holding it twice.
    virtual Appended append_and_close(const Source& source, const Claim& claim, EventBatch batch,
                                      Progress progress) = 0;

    /// Closes a claimed slot without storing anything.
    virtual void close(const Source& source, const SlotClose& close) = 0;

    /// After a claim found the source locked: who holds it, when that is
    /// not a loader in a turn (a stranger); empty when it is one, or when
    /// nobody does any more. Best effort: failing to tell is not an error.
    virtual std::optional<LockHolder> stranger_holding(const Source& /*source*/) { return std::nullopt; }
};

}  // namespace tributary
