#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "log_announcer.h"
#include "maintenance_step.h"

namespace tributary::maintenance {

/// The herald's one step, every beat (ElectedRole, role "herald"): announces the log's head
/// when it moved. It remembers the watermark it saw last, and forgets it on any failure, so
/// that the next beat announces anyway: a herald that was away may have missed a commit.
class AnnounceStep : public MaintenanceStep {
public:
    explicit AnnounceStep(LogAnnouncer& announcer) : announcer_(announcer) {}

    const char* name() const override { return "announce"; }
    void run(const MaintainerLease& lease) override;

    /// Notifications sent so far (for logs and tests).
    std::uint64_t announced() const { return announced_.load(std::memory_order_relaxed); }

private:
    LogAnnouncer& announcer_;
    std::optional<std::uint64_t> since_;
    std::optional<MaintainerLease> lease_;  ///< the lease since_ was seen under
    std::atomic<std::uint64_t> announced_{0};
};

}  // namespace tributary::maintenance
