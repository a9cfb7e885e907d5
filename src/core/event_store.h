#pragma once

#include <cstdint>

#include "event.h"
#include "source_gate.h"

namespace tributary {

/// The central log, and each source's cursor (the id of its last stored event).
/// Throws DatabaseUnavailable or BatchRejected (errors.h); not thread-safe:
/// one store per worker session.
class EventStore {
public:
    enum class AppendResult {
        appended,  ///< the batch is committed and the cursor moved to its last id
        conflict,  ///< the cursor was not `expected_cursor` (another writer won):
                   ///< nothing stored; re-read the cursor
    };

    virtual ~EventStore() = default;
    virtual std::int64_t cursor(int source_id) = 0;
    /// Stores `batch` (non-empty, ids increasing, all > expected_cursor) and
    /// advances the cursor to its last id, in one transaction. With `close`,
    /// the source's request slot is closed too (SourceGate::record_success,
    /// lock released) whenever append returns, conflict or not, in the same
    /// transaction as the batch where it can; when append throws, the slot
    /// is not closed, or (DatabaseUnavailable) not known to be.
    virtual AppendResult append(int source_id, std::int64_t expected_cursor, const EventBatch& batch,
                                const SourceGate::SlotSuccess* close = nullptr) = 0;
};

}  // namespace tributary
