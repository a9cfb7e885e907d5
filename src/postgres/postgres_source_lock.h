#pragma once

#include <cstdint>
#include <unordered_map>

#include "core/source_lock.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// SourceLock as a session-level advisory lock
/// `pg_try_advisory_lock(kAdvisoryNamespace, source_id)` on the worker's own
/// session. It dies with the session; the store's compare-and-set makes a
/// silently lost lock harmless.
class PostgresSourceLock : public SourceLock {
public:
    explicit PostgresSourceLock(PostgresSession& session);
    bool try_acquire(int source_id) override;
    void release(int source_id) noexcept override;

private:
    PostgresSession& session_;
    /// source id -> session generation it was taken in
    std::unordered_map<int, std::uint64_t> held_;
};

}  // namespace tributary::postgres
