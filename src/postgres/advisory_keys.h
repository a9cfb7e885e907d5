#pragma once

namespace tributary::postgres {

/// First key of every advisory lock tributary takes (two-int form: no
/// hashing, so no collisions with each other; other applications should
/// avoid this namespace). 0x74726962 is "trib" in ASCII.
constexpr int kAdvisoryNamespace = 0x74726962;

/// Second key of the lock that serialises `migrate` runs. Source ids are
/// positive, so it can never collide with a source lock.
constexpr int kMigrationLockKey = 0;

}  // namespace tributary::postgres
