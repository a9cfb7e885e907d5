#pragma once

#include <cstdint>
#include <optional>

#include "maintenance_step.h"

namespace tributary::maintenance {

/// What one beat of the herald found.
struct Announcement {
    /// The log's watermark: every event of a transaction below it is readable (an opaque,
    /// increasing transaction number).
    std::uint64_t watermark = 0;
    /// Whether consumers were told: an event became readable since the beat's `since`.
    bool announced = false;
};

/// The port to telling consumers that the log's head moved (sql/internal/87_herald.sql's
/// herald_announce): the herald's one statement per beat.
class LogAnnouncer {
public:
    virtual ~LogAnnouncer() = default;
    /// For the herald holding `lease`: tells consumers when an event became readable since
    /// `since` (the watermark of the previous beat; nullopt: unknown, which tells them anyway).
    /// Throws LeaseLost when `lease` is not the held one (and tells nobody), DatabaseUnavailable.
    virtual Announcement announce(const MaintainerLease& lease, std::optional<std::uint64_t> since) = 0;
};

}  // namespace tributary::maintenance
