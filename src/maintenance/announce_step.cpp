#include "maintenance/announce_step.h"

namespace tributary::maintenance {

void AnnounceStep::run(const MaintainerLease& lease) {
    // A new tenure starts from nothing known: between the last holder's last beat and this one,
    // events may have become readable that nobody announced.
    if (!lease_ || lease_->holder != lease.holder || lease_->token != lease.token) {
        since_.clear();
        stride_ = 1;
        skip_ = 0;
        quiet_beats_ = 0;
    }
    lease_ = lease;
    ++quiet_beats_;
    if (skip_ > 0) {
        --skip_;
        return;
    }
    try {
        const auto beat = announcer_.announce(lease, since_);
        since_ = beat.watermarks;
        if (beat.announced) {
            announced_.fetch_add(1, std::memory_order_relaxed);
            stride_ = 1;
            quiet_beats_ = 0;
        } else if (quiet_beats_ >= kQuietBeats && stride_ < kMaxStride) {
            stride_ *= 2;
            quiet_beats_ = 0;
        }
        skip_ = stride_ - 1;
    } catch (...) {
        since_.clear();
        stride_ = 1;
        skip_ = 0;
        throw;
    }
}

}  // namespace tributary::maintenance
