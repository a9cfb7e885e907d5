#pragma once

#include <cstdint>

#include "event.h"

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
    /// advances the cursor to its last id, in one transaction.
    virtual AppendResult append(int source_id, std::int64_t expected_cursor, const EventBatch& batch) = 0;
};

}  // namespace tributary
