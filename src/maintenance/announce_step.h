#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "log_announcer.h"
#include "maintenance_step.h"

namespace tributary::maintenance {

/// The herald's one step, every beat (ElectedRole, role "herald"): announces the log's head
/// when it moved. It remembers the watermarks it saw last (one per node of the log), and
/// forgets them on any failure, so that the next beat announces anyway: a herald that was away
/// may have missed a commit.
///
/// While the log is quiet it asks less often: after kQuietBeats beats without news, every
/// second beat; after as many more, every kMaxStride-th (40 ms at the default 10 ms); the first
/// news, a failure or a new tenure bring it back to every beat. A statement per beat is the
/// herald's whole cost, so an idle installation pays a quarter of it, and the first event after
/// a quiet spell waits at most kMaxStride beats for its announcement.
class AnnounceStep : public MaintenanceStep {
public:
    static constexpr int kQuietBeats = 100;
    static constexpr int kMaxStride = 4;

    explicit AnnounceStep(LogAnnouncer& announcer) : announcer_(announcer) {}

    const char* name() const override { return "announce"; }
    void run(const MaintainerLease& lease) override;

    /// Notifications sent so far (for logs and tests).
    std::uint64_t announced() const { return announced_.load(std::memory_order_relaxed); }

private:
    LogAnnouncer& announcer_;
    std::vector<std::uint64_t> since_;      ///< empty: unknown
    std::optional<MaintainerLease> lease_;  ///< the lease since_ was seen under
    std::atomic<std::uint64_t> announced_{0};
    int stride_ = 1;       ///< announce on every stride_-th beat
    int quiet_beats_ = 0;  ///< beats since the last news or the last change of stride
    int skip_ = 0;         ///< beats to let pass before the next announce
};

}  // namespace tributary::maintenance
