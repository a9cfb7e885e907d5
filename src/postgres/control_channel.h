#pragma once

namespace tributary::postgres {

/// LISTEN/NOTIFY channel on which source changes and nudges reach running
/// loaders (`run`), so that they read the schedule again at once. Hints
/// only: a loader that misses one reads the schedule within a second anyway.
inline constexpr const char* kControlChannel = "tributary_control";

/// Channel on which loaders say, after a commit, that a source has new
/// events (payload: the source name); consumers and `tail` listen on it.
inline constexpr const char* kEventsChannel = "tributary_events";

}  // namespace tributary::postgres
