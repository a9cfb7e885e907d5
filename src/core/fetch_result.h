#pragma once

#include <chrono>
#include <optional>
#include <string>

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
    };

    Status status = Status::ok;
    EventBatch events;
    std::string error;
    std::chrono::milliseconds retry_after{0};

    static FetchResult batch(EventBatch events) { return {Status::ok, std::move(events), {}, {}}; }
    static FetchResult failure(Status s, std::string why, std::chrono::milliseconds retry_after = {}) {
        return {s, {}, std::move(why), retry_after};
    }
};

const char* to_string(FetchResult::Status s);

}  // namespace tributary
