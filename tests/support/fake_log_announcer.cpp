#include "support/fake_log_announcer.h"

namespace tributary::fakes {

maintenance::Announcement FakeLogAnnouncer::announce(const maintenance::MaintainerLease& lease,
                                                     std::optional<std::uint64_t> since) {
    ++calls;
    lease_.fence(lease);  // throws LeaseLost, as the function answers NULL
    const auto now = watermark();
    bool announced = !since;
    if (since && now > *since)
        for (auto it = events_.lower_bound(*since); it != events_.end() && it->first < now; ++it)
            announced = announced || it->second > 0;
    if (announced) ++notifications;
    return {now, announced};
}

std::uint64_t FakeLogAnnouncer::begin() {
    open_.insert(next_tx_);
    return next_tx_++;
}

void FakeLogAnnouncer::commit(std::uint64_t tx, int events) {
    open_.erase(tx);
    events_[tx] = events;
}

std::uint64_t FakeLogAnnouncer::watermark() const { return open_.empty() ? next_tx_ : *open_.begin(); }

}  // namespace tributary::fakes
