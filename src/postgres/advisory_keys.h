#pragma once

#include <string>

namespace tributary::postgres {

/// First key of every advisory lock tributary takes (two-int form: no
/// hashing, so no collisions with each other; other applications should
/// avoid this namespace). 0x74726962 is "trib" in ASCII.
constexpr int kAdvisoryNamespace = 0x74726962;

/// Second key of the lock that serialises `migrate` runs. Source ids are
/// positive, so it can never collide with a source lock.
constexpr int kMigrationLockKey = 0;

/// (namespace, -source id), in SQL only: a published or pushed source's
/// publish lock, taken shared by every transaction publishing to it or a
/// receiver's group commit storing to it, and exclusive by the trigger that
/// refuses to remove a source with events (sql/api/80_publish.sql,
/// sql/internal/70_receiver_store.sql). Negative, so never a loader's source lock.

/// The lock argument of the loader's closing functions (sql/internal/5*_loader_*.sql):
/// the namespace when the statement should release the source's lock, else
/// SQL NULL (libpqxx 6.4 passes a null pointer as NULL).
inline const char* lock_to_release(bool held) {
    static const std::string kNamespace = std::to_string(kAdvisoryNamespace);
    return held ? kNamespace.c_str() : nullptr;
}

}  // namespace tributary::postgres
