#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tributary {

/// One lane of a group of lanes (issue 28), as the same read saw it.
struct LaneFigures {
    int lane = 0;
    bool held = false;  ///< a consumer holds it; if not, its events wait
    std::int64_t events_behind = 0;
    bool events_behind_capped = false;          ///< at least events_behind
    double oldest_unprocessed_age_seconds = 0;  ///< 0 when nothing is waiting
};

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
    int lanes = 1;                          ///< 1: a group without lanes
    int unheld_lanes = 0;                   ///< lanes no consumer holds
    std::vector<LaneFigures> lane_figures;  ///< each lane of a group of lanes, in lane order
};

}  // namespace tributary
