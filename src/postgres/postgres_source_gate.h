#pragma once

#include "core/source_gate.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// SourceGate on the row `tributary.gates(source_id)` and the session-level
/// advisory lock `(kAdvisoryNamespace, source_id)` of the worker's own
/// session, through the functions of migration 0006: one statement claims
/// (lock, gate, cursor), one closes (gate, unlock). They compare against the
/// database clock (one clock for every host). Passing the gate leases the
/// slot for the request's whole timeout plus the interval, so a second
/// process cannot start a request while one is in flight, even if the first
/// lost its lock; closing the slot sets the next allowed time from when the
/// request ended.
class PostgresSourceGate : public SourceGate {
public:
    explicit PostgresSourceGate(PostgresSession& session);
    Pass try_pass(const Source& source) override;
    void record_success(const Source& source, std::int64_t lease, const Success& success) override;
    void release_slot(const Source& source, std::int64_t lease) override;
    void record_failure(const Source& source, std::int64_t lease, Failure kind, const std::string& error,
                        std::chrono::milliseconds delay) override;

private:
    /// Runs one statement; after an error that left the session alive,
    /// makes sure the source's lock is not held.
    template <typename Statement>
    auto guarded(int source_id, Statement&& statement);
    /// A close: the statement gets the lock argument (lock_to_release).
    template <typename Statement>
    void close(int source_id, Statement&& statement);
    void release_if_held(int source_id) noexcept;

    PostgresSession& session_;
};

}  // namespace tributary::postgres
