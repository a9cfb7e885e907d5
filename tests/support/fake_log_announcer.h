#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "maintenance/log_announcer.h"
#include "support/fake_lease_store.h"

namespace tributary::fakes {

/// The log's head in memory, as herald_announce sees it (sql/internal/87_herald.sql): writers'
/// transactions take increasing numbers, the watermark is the oldest still open (or the next
/// number), and a beat announces when a committed event lies between its `since` and the
/// watermark. The lease is the fake store's.
class FakeLogAnnouncer : public maintenance::LogAnnouncer {
public:
    explicit FakeLogAnnouncer(const FakeLeaseStore& lease) : lease_(lease) {}

    maintenance::Announcement announce(const maintenance::MaintainerLease& lease,
                                       std::optional<std::uint64_t> since) override;

    /// A writer's transaction begins: it holds the watermark back until it ends.
    std::uint64_t begin();
    /// It commits with `events` events (0: a transaction that stored nothing).
    void commit(std::uint64_t tx, int events);

    int notifications = 0;  ///< NOTIFYs sent
    int calls = 0;          ///< announce calls (the herald's statements)

private:
    std::uint64_t watermark() const;

    const FakeLeaseStore& lease_;
    std::uint64_t next_tx_ = 1;
    std::set<std::uint64_t> open_;
    std::map<std::uint64_t, int> events_;  ///< committed transactions' events
};

}  // namespace tributary::fakes
