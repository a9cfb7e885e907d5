#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "maintenance/log_announcer.h"
#include "support/fake_lease_store.h"

namespace tributary::fakes {

/// The log's head in memory, as herald_announce_nodes sees it (sql/internal/87_herald.sql), on
/// `nodes` nodes (1: one PostgreSQL; more: Citus' workers, each with transaction numbers of its
/// own): writers' transactions take increasing numbers on their node, a node's watermark is its
/// oldest still open (or its next number), and a beat announces when a committed event lies
/// between its `since` and the watermark on any node, or when `since` is unknown (empty, or of
/// another count of nodes). The lease is the fake store's.
class FakeLogAnnouncer : public maintenance::LogAnnouncer {
public:
    explicit FakeLogAnnouncer(const FakeLeaseStore& lease, int nodes = 1);

    maintenance::Announcement announce(const maintenance::MaintainerLease& lease,
                                       const std::vector<std::uint64_t>& since) override;

    /// A writer's transaction begins on `node`: it holds that node's watermark back until it ends.
    std::uint64_t begin(int node = 0);
    /// It commits with `events` events (0: a transaction that stored nothing).
    void commit(std::uint64_t tx, int events, int node = 0);

    int notifications = 0;  ///< NOTIFYs sent
    int calls = 0;          ///< announce calls (the herald's statements)

private:
    struct Node {
        std::uint64_t next_tx = 1;
        std::set<std::uint64_t> open;
        std::map<std::uint64_t, int> events;  ///< committed transactions' events
        std::uint64_t watermark() const { return open.empty() ? next_tx : *open.begin(); }
        bool readable_since(std::uint64_t since) const;
    };

    const FakeLeaseStore& lease_;
    std::vector<Node> nodes_;
};

}  // namespace tributary::fakes
