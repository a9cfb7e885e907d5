#pragma once

#include <cstdint>
#include <vector>

#include "maintenance_step.h"

namespace tributary::maintenance {

/// What one beat of the herald found.
struct Announcement {
    /// The log's watermarks, one per node that holds events (one on one PostgreSQL; on Citus
    /// one per worker, in a fixed order): every event of a transaction below its node's
    /// watermark is readable. Opaque, increasing transaction numbers, each of its own node.
    std::vector<std::uint64_t> watermarks;
    /// Whether consumers were told: an event became readable since the beat's `since`.
    bool announced = false;
};

/// The port to telling consumers that the log's head moved (sql/internal/87_herald.sql's
/// herald_announce_nodes): the herald's one statement per beat.
class LogAnnouncer {
public:
    virtual ~LogAnnouncer() = default;
    /// For the herald holding `lease`: tells consumers when an event became readable since
    /// `since` (the watermarks of the previous beat, as it returned them; empty: unknown, which
    /// tells them anyway, as does a count of nodes that changed).
    /// Throws LeaseLost when `lease` is not the held one (and tells nobody), DatabaseUnavailable.
    virtual Announcement announce(const MaintainerLease& lease, const std::vector<std::uint64_t>& since) = 0;
};

}  // namespace tributary::maintenance
