#pragma once

#include <cstdint>
#include <mutex>

#include "core/stop_signal.h"
#include "postgres_session.h"
#include "webhook/pushed_events.h"

namespace tributary::postgres {

/// PushedEventStore over tributary.receiver_store
/// (sql/internal/70_receiver_store.sql): one statement, so one transaction
/// and one round trip, per group commit, committed synchronously whatever
/// the server's default. Runs as a login member of tributary_receiver.
///
/// A session that dies (server gone, connection cut, backend terminated,
/// COMMIT outcome unknown) is StoreUnavailable and is opened afresh on the
/// next call, so the store recovers once the database is back. A deadlock
/// or serialization failure with another receiver storing the same keys, or
/// a lock waited for past lock_timeout, is retried a few times (not once a
/// stop is asked for), then StoreUnavailable too. Anything else the
/// database refuses (a payload jsonb cannot hold) is std::runtime_error with
/// the server's message: nothing of the call is stored.
class PostgresPushedEvents : public webhook::PushedEventStore {
public:
    /// The session is this store's own (the catalogue reads on another).
    /// With `stop`, a commit that lost is not tried again once a stop is
    /// asked for: its requests are answered 503 and the senders retry, so
    /// that a stopping receiver does not wait out every attempt.
    explicit PostgresPushedEvents(PostgresSession& session, const StopSignal* stop = nullptr);

    std::vector<std::optional<std::size_t>> store(const std::vector<const webhook::PushedBatch*>& requests) override;

private:
    std::vector<std::optional<std::size_t>> store_once(const std::vector<const webhook::PushedBatch*>& requests);

    PostgresSession& session_;
    const StopSignal* stop_;
    std::mutex mutex_;                          ///< one call at a time on the session
    std::uint64_t synchronous_generation_ = 0;  ///< the session synchronous_commit was set on
};

}  // namespace tributary::postgres
