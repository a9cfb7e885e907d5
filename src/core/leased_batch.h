#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tributary {

/// One event of the log as a consumer group hands it out.
struct LoggedEvent {
    std::int64_t seq = 0;
    std::string source;  ///< the source's name
    std::int64_t event_id = 0;
    /// The payload's JSON text as PostgreSQL returns it: passed on, never
    /// parsed or re-serialised by the core.
    std::string payload;
    std::string loaded_at;  ///< as the database formats it; informational
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
