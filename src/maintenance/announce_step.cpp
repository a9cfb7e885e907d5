#include "maintenance/announce_step.h"

namespace tributary::maintenance {

void AnnounceStep::run(const MaintainerLease& lease) {
    // A new tenure starts from nothing known: between the last holder's last beat and this one,
    // events may have become readable that nobody announced.
    if (!lease_ || lease_->holder != lease.holder || lease_->token != lease.token) since_.reset();
    lease_ = lease;
    try {
        const auto beat = announcer_.announce(lease, since_);
        since_ = beat.watermark;
        if (beat.announced) announced_.fetch_add(1, std::memory_order_relaxed);
    } catch (...) {
        since_.reset();
        throw;
    }
}

}  // namespace tributary::maintenance
