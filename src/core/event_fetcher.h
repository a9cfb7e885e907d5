#pragma once

#include <cstdint>

#include "clock.h"
#include "cursor.h"
#include "fetch_result.h"
#include "source.h"

namespace tributary {

/// Asks a source for the events after a cursor.
///
/// Contract: for a source keyed by id (Source::keyed_by_id), at most `limit`
/// events, ids strictly increasing and all greater than the cursor's id; for
/// any other, the page's records not yet taken at the cursor, each with its
/// key, and the cursor after them in `next`. Each payload is a JSON value
/// PostgreSQL can store; anything else comes back as a failed FetchResult,
/// never a partial batch.
/// Not thread-safe: one fetcher per worker.
class EventFetcher {
public:
    virtual ~EventFetcher() = default;
    virtual FetchResult fetch(const Source& source, const Cursor& cursor, int limit) = 0;

    /// The next fetch sends its request no later than `latest` (the clock's
    /// steady time), or not at all: it then fails with Status::late. A
    /// loader's claim on a source runs out; a request sent after that (the
    /// process paused between its last look at the clock and the request)
    /// could reach the source right after another loader's. A fetcher that
    /// cannot check this as late as the moment it sends may ignore it.
    virtual void send_no_later_than(Clock::time_point latest) { (void)latest; }
};

}  // namespace tributary
