#include "support/fake_log_announcer.h"

namespace tributary::fakes {

FakeLogAnnouncer::FakeLogAnnouncer(const FakeLeaseStore& lease, int nodes)
    : lease_(lease), nodes_(static_cast<std::size_t>(nodes)) {}

bool FakeLogAnnouncer::Node::readable_since(std::uint64_t since) const {
    const auto now = watermark();
    for (auto it = events.lower_bound(since); it != events.end() && it->first < now; ++it)
        if (it->second > 0) return true;
    return false;
}

maintenance::Announcement FakeLogAnnouncer::announce(const maintenance::MaintainerLease& lease,
                                                     const std::vector<std::uint64_t>& since) {
    ++calls;
    lease_.fence(lease);  // throws LeaseLost, as the function answers NULL
    const bool known = since.size() == nodes_.size();
    maintenance::Announcement beat{{}, !known};
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
        beat.watermarks.push_back(nodes_[i].watermark());
        if (known && nodes_[i].readable_since(since[i])) beat.announced = true;
    }
    if (beat.announced) ++notifications;
    return beat;
}

std::uint64_t FakeLogAnnouncer::begin(int node) {
    auto& n = nodes_.at(static_cast<std::size_t>(node));
    n.open.insert(n.next_tx);
    return n.next_tx++;
}

void FakeLogAnnouncer::commit(std::uint64_t tx, int events, int node) {
    auto& n = nodes_.at(static_cast<std::size_t>(node));
    n.open.erase(tx);
    n.events[tx] = events;
}

}  // namespace tributary::fakes
