#pragma once

#include <cstdint>

#include "fetch_result.h"
#include "source.h"

namespace tributary {

/// Asks a source for the events after a cursor.
///
/// Contract: returns at most `limit` events, ids strictly increasing and all
/// greater than `after_id`, each payload a JSON value PostgreSQL can store;
/// anything else comes back as a failed FetchResult, never a partial batch.
/// Not thread-safe: one fetcher per worker.
class EventFetcher {
public:
    virtual ~EventFetcher() = default;
    virtual FetchResult fetch(const Source& source, std::int64_t after_id, int limit) = 0;
};

}  // namespace tributary
