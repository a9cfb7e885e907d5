#pragma once

namespace tributary {

/// A named moment where the crash tests may kill the process (SIGKILL).
///
/// The call is resolved at link time: the `tributary` binary links a no-op
/// (src/core/fault_points_off.cpp), so no setting can make a normal run
/// crash; only the test binary `tributary-crashable` links the armed
/// implementation (tests/crash/fault_points_armed.cpp), driven by the
/// TRIBUTARY_FAULT_POINTS environment variable. Points: after_fetch,
/// mid_insert, during_commit, after_commit.
void fault_point(const char* name);

}  // namespace tributary
