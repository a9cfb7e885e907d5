#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tributary {

/// One event of the log as a consumer group hands it out.
struct LoggedEvent {
    std::int64_t seq = 0;
    std::string source;  ///< the source's name
    /// The event's integer key, for a source read after-id; none for a
    /// source keyed by text (every other paging style).
    std::optional<std::int64_t> event_id;
    /// The event's key as text, for every source: event_id's digits, or the
    /// key as stored (a composite key is the JSON array of its parts).
    std::string event_key;
    /// The payload's JSON text as PostgreSQL returns it: passed on, never
    /// parsed or re-serialised by the core.
    std::string payload;
};

/// A batch of a group's events leased to one consumer. Only the holder of
/// `token` can ack, fail or extend it; after the lease runs out another
/// consumer may take it over with a new token and `delivery` + 1.
struct LeasedBatch {
    std::int64_t id = 0;
    std::string token;
    int delivery = 1;  ///< 1 on the first delivery
    std::vector<LoggedEvent> events;
};

}  // namespace tributary
