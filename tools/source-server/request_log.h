#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include "fault_modes.h"

namespace tributary::source_server {

// One GET /sources/NAME/events request, or one request to a style or fixture route.
struct RequestRecord {
    std::string source;                    // NAME from the path (also for unknown sources)
    std::int64_t arrival_us = 0;           // CLOCK_REALTIME when the handler got the request
    std::optional<std::int64_t> after_id;  // empty when missing or invalid
    std::optional<std::int64_t> limit;     // the limit applied (default 1000, capped at 10000)
    int status = 0;
    std::int64_t events = 0;            // events the body was built from
    FaultMode fault = FaultMode::none;  // the fault mode that shaped the response
    std::string retry_after;            // Retry-After header sent, if any
    std::string style;                  // style or fixture routes: "cursor", "github", ...; empty for events
    std::string query;                  // style or fixture routes: the query string asked (the cursor with it)
};

// Every request, in memory, in completion order (sort by arrival_us if order matters).
class RequestLog {
public:
    void add(RequestRecord record);
    std::int64_t size() const;
    // JSON array of records; only those of `source` when given.
    std::string to_json(const std::optional<std::string>& source) const;

private:
    mutable std::mutex mutex_;
    std::deque<RequestRecord> records_;  // a deque never moves old records when it grows
};

}  // namespace tributary::source_server
