#pragma once

#include <chrono>

namespace tributary::postgres {

/// LISTEN/NOTIFY channel on which source changes and nudges reach running
/// loaders (`run`), so that they read the schedule again at once. Hints
/// only: a loader that misses one reads the schedule within a second anyway.
inline constexpr const char* kControlChannel = "tributary_control";

/// Channel on which the herald says that events became readable (payload:
/// the watermark, below which every event is readable; on Citus the array of
/// the workers' watermarks: sql/internal/87_herald.sql); consumers, `tail`
/// and the console listen.
inline constexpr const char* kEventsChannel = "tributary_events";

/// Listeners on kEventsChannel wake at most once per this. The herald sends
/// at most one notification per beat (10 ms by default), so this costs it
/// no latency; it only bounds what a stranger's NOTIFY flood costs.
inline constexpr std::chrono::milliseconds kEventsWakeWindow{10};

}  // namespace tributary::postgres
