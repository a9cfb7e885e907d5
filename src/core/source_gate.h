#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "source.h"

namespace tributary {

/// "Who may ask, and when": the shared per-source lock and schedule
/// (DESIGN.md §5 steps 1-2). A pass holds the source's lock, a non-blocking
/// mutual exclusion shared by all loader processes, until the slot is
/// closed; at most one request per source is in flight across all processes,
/// and the next one starts no sooner than `interval` after the previous one
/// ended (or later, when the source is backing off or asked us to wait with
/// Retry-After). A lock may be lost silently (the session behind it died);
/// the lease and the store's compare-and-set keep that harmless.
class SourceGate {
public:
    enum class Decision {
        pass,         ///< this worker holds the source and a request slot is reserved
        locked,       ///< another worker holds the source
        not_due,      ///< asked recently, by anyone: wait for the interval
        backing_off   ///< the source failed lately and is waiting out its backoff
    };

    struct Pass {
        Decision decision = Decision::not_due;
        int consecutive_failures = 0;  ///< before this request
        bool drained = false;          ///< the last request, by anyone, found nothing new
        int empty_streak = 0;          ///< answers in a row, by anyone, that had nothing new
        /// Names this reservation: closing a slot with a stale lease (a
        /// worker that stalled past it while another took the source) does
        /// nothing, so a zombie cannot shorten someone else's lease.
        std::int64_t lease = 0;
        /// The source's cursor, read after the slot was reserved, when the
        /// gate can tell it in the same round trip (else the loader asks
        /// the store).
        std::optional<std::int64_t> cursor;
    };

    /// How a good fetch went, and when the source may be asked next.
    struct Success {
        bool drained = false;                 ///< it had nothing new
        std::optional<std::int64_t> backlog;  ///< what it said it still holds, if it did
        std::chrono::milliseconds pause{0};   ///< no request before this has passed
    };

    enum class Failure { transient, throttled, failing };

    /// A success close that travels with a batch, so that the batch and the
    /// close commit together (EventStore::append): the slot, and what
    /// record_success would be told.
    struct SlotSuccess {
        int source_id = 0;
        std::chrono::milliseconds interval{0};  ///< the source's
        std::int64_t lease = 0;
        Success success;
    };

    virtual ~SourceGate() = default;
    /// Takes the source's lock and reserves the next request slot when the
    /// source is due; with any other decision, the lock is not held. A slot
    /// is closed once, by one of the three closes below, each of which also
    /// lets the lock go; a second close under the same lease (replayed after
    /// a lost connection) changes nothing.
    virtual Pass try_pass(const Source& source) = 0;
    /// Closes a reserved slot after a good fetch: failures are cleared, the
    /// empty streak grows by one when drained and is reset otherwise.
    virtual void record_success(const Source& source, std::int64_t lease, const Success& success) = 0;
    /// Closes a reserved slot whose request was abandoned (the process is
    /// stopping): next request after `interval`; failures and state stay.
    virtual void release_slot(const Source& source, std::int64_t lease) = 0;
    /// Closes a reserved slot after a failure: no request for `delay`.
    virtual void record_failure(const Source& source, std::int64_t lease, Failure kind, const std::string& error,
                                std::chrono::milliseconds delay) = 0;
};

}  // namespace tributary
