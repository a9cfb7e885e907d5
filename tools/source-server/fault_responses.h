#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <httplib.h>

#include "event_generator.h"
#include "fault_modes.h"
#include "source_store.h"

namespace tributary::source_server {

struct BatchQuery {
    std::int64_t after_id = 0;
    std::int64_t limit = 1000;
};

struct FaultOutcome {
    std::int64_t events = 0;  // events the hostile body was built from
    std::string retry_after;  // Retry-After value sent, if any
};

// Fills `res` with exactly the hostile response of `mode` (not `none`) for this request.
// Never changes the source's data. Batches that need events to be hostile (out-of-order
// needs two, missing-id one, ...) make up the following ids if the source has none left.
// Streaming modes (huge, slow-body) end early when `stopping` becomes true.
FaultOutcome respond_with_fault(FaultMode mode, const Source& source, const EventGenerator& generator, BatchQuery query,
                                std::int64_t now_us, httplib::Response& res, const std::atomic<bool>& stopping);

// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT").
std::string http_date(std::int64_t unix_seconds);

}  // namespace tributary::source_server
