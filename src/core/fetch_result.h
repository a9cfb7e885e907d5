#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "cursor.h"
#include "event.h"

namespace tributary {

/// What a fetch produced. A source misbehaving is routine, so it is a value,
/// not an exception; `error` names the cause in words a user can act on.
struct FetchResult {
    enum class Status {
        ok,         ///< `events` holds the batch (possibly empty)
        transient,  ///< network, timeout, 5xx, malformed body: back off and retry
        throttled,  ///< 429/503 with Retry-After: no request before `retry_after`
        failing,    ///< the source is wrong (4xx, bad ids, unstorable content)
        stopped,    ///< abandoned because the process is stopping
        late,       ///< not sent: too long after the claim (EventFetcher::send_no_later_than)
    };

    /// Where a failure came from, for metrics and operators.
    enum class Cause { none, network, http_status, invalid_batch };

    Status status = Status::ok;
    EventBatch events;
    std::string error;
    std::chrono::milliseconds retry_after{0};
    Cause cause = Cause::none;
    /// Events the source still holds after this batch, when it says so
    /// ("remaining", or "head_id" in the response).
    std::optional<std::int64_t> backlog;
    /// ok: the cursor after this batch (for an `after-id` source it may be
    /// left empty: the last event's id then). A next cursor equal to the
    /// claim's with no events means nothing new.
    std::optional<Cursor> next;
    /// ok: the source said it has nothing after this page for now (has-more
    /// false, end of stream, no next token or link, a page not full).
    bool at_end = false;
    /// ok: the source's rate limit is spent: no request from anyone before
    /// this has passed (X-RateLimit-Reset, RateLimit).
    std::chrono::milliseconds hold_off{0};
    /// Whatever the fetcher holds on behalf of this batch's payloads (a share
    /// of a memory budget), released when the result is dropped: keep the
    /// result alive until the batch is stored. Empty when nothing is held.
    std::shared_ptr<const void> memory_hold;

    static FetchResult batch(EventBatch events) {
        FetchResult r;
        r.events = std::move(events);
        return r;
    }
    static FetchResult failure(Status s, std::string why, std::chrono::milliseconds retry_after = {}) {
        FetchResult r;
        r.status = s;
        r.error = std::move(why);
        r.retry_after = retry_after;
        return r;
    }
    FetchResult&& because(Cause c) && {
        cause = c;
        return std::move(*this);
    }
};

const char* to_string(FetchResult::Status s);

}  // namespace tributary
