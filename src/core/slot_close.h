#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace tributary {

/// How a claimed request slot ends when no batch is stored with it: after a
/// good answer (nothing new, or nothing we could store), after a failure, or
/// abandoned (a stop, a stall). A value, so that a close cut short by an
/// outage can be replayed as it was meant once the database answers again:
/// a slot closes once per lease, so a replay that finds it closed, or the
/// lease taken over by another worker, changes nothing.
struct SlotClose {
    enum class Kind { released, succeeded, failed };
    enum class Failure { transient, throttled, failing };

    Kind kind = Kind::released;
    std::int64_t lease = 0;  ///< the claim's, naming the slot
    /// No request before this has passed (succeeded: the pause the loader
    /// chose; failed: the backoff or Retry-After). Released: the interval.
    std::chrono::milliseconds pause{0};
    bool drained = false;                  ///< succeeded: the source had nothing new
    std::optional<std::int64_t> backlog;   ///< succeeded: what it said it still holds
    Failure failure = Failure::transient;  ///< failed: what kind
    std::string error;                     ///< failed: why, shown in status

    static SlotClose released(std::int64_t lease) {
        SlotClose c;
        c.lease = lease;
        return c;
    }
    static SlotClose succeeded(std::int64_t lease, bool drained, std::optional<std::int64_t> backlog,
                               std::chrono::milliseconds pause) {
        auto c = released(lease);
        c.kind = Kind::succeeded;
        c.drained = drained;
        c.backlog = backlog;
        c.pause = pause;
        return c;
    }
    static SlotClose failed(std::int64_t lease, Failure failure, std::string error, std::chrono::milliseconds delay) {
        auto c = released(lease);
        c.kind = Kind::failed;
        c.failure = failure;
        c.error = std::move(error);
        c.pause = delay;
        return c;
    }
};

}  // namespace tributary
