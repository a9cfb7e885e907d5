#pragma once

#include <cstdint>
#include <string>

namespace tributary {

/// A consumer group's backlog as one read of the database saw it (the
/// console's groups document): what the group metrics export.
struct GroupFigures {
    std::string name;
    std::int64_t events_behind = 0;
    /// The count stopped at the console's cap: at least events_behind.
    bool events_behind_capped = false;
    double oldest_unprocessed_age_seconds = 0;  ///< 0 when nothing is waiting
    std::int64_t batches_in_flight = 0;
    std::int64_t retries_waiting = 0;
    std::int64_t dead_letters = 0;
};

}  // namespace tributary
