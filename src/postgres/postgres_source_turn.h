#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/source_turn.h"
#include "core/stop_signal.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// SourceTurn through the loader's SQL functions (tributary.loader_claim,
/// loader_append, loader_close_*), on the worker's own session. It owns
/// everything a turn holds: the lease (on the row tributary.gates(source_id),
/// compared against the database clock, one clock for every host), the
/// session-level advisory lock (kAdvisoryNamespace, source_id), and the
/// cursor (tributary.cursors, moved by compare-and-set). A turn is two
/// statements: the claim, committed asynchronously (the gate row is a
/// schedule, not data), and either loader_append (a batch of up to 50
/// events, its cursor and its close in one statement) or, for larger
/// batches, one transaction of the cursor's compare-and-set, COPY and the
/// close; or a close alone, asynchronously committed. Every statement that
/// closes a slot releases the lock as its last step.
///
/// On Citus (docs/citus.md) each function runs on the source's worker, and
/// the lock is taken and let go in this session, on the coordinator, around
/// them; every batch goes in one statement.
///
/// Memory: a batch holding an event of 1 MiB or more goes row by row, each
/// payload moved into its own INSERT, so that besides the batch only libpq's
/// send buffer holds it; and the session is then recycled, because libpq's
/// buffers only ever grow. A one-statement batch of 1 MiB or more in all
/// gives its payloads up as they go into the statement's JSON array. Both
/// are tried once: a retry would need the payloads again.
class PostgresSourceTurn : public SourceTurn {
public:
    /// With `stop`, a batch that lost a lock wait or a serialization race is
    /// not tried again once a stop is asked for: the turn fails as it is
    /// (nothing stored, the next run fetches the batch again), so that a
    /// stopping loader does not wait out its retries.
    explicit PostgresSourceTurn(PostgresSession& session, const StopSignal* stop = nullptr);
    Claim claim(const Source& source) override;
    Appended append_and_close(const Source& source, const Claim& claim, EventBatch batch, Progress progress) override;
    void close(const Source& source, const SlotClose& close) override;
    /// From the view tributary.foreign_locks (sql/60_foreign_locks.sql).
    std::optional<LockHolder> stranger_holding(const Source& source) override;

private:
    /// The arguments of the success close that travels with a batch.
    struct BatchClose;

    Stored append_large(const Source& source, std::int64_t expected, EventBatch& batch, const BatchClose& close);
    /// With `give_away`, the payloads are released as they go into the
    /// statement's JSON array.
    Stored append_in_one_statement(const Source& source, std::int64_t expected, EventBatch& batch,
                                   const BatchClose& close, bool give_away);
    Stored append_by_copy(const Source& source, std::int64_t expected, const EventBatch& batch,
                          const BatchClose& close);
    /// A batch's slot, closed on its own after COPY lost to a unique key.
    void close_after_batch(const BatchClose& close);
    /// A batch of a source keyed by id that a rewind replays: ids stored
    /// already are skipped (tributary.loader_append_replay).
    Appended append_replay(const Source& source, std::int64_t expected, EventBatch& batch, const BatchClose& close);
    /// Runs `store` (one attempt at a batch) and puts what PostgreSQL says in
    /// the port's terms: a payload it refuses -> BatchRejected; a lost
    /// session or an unknown COMMIT -> DatabaseUnavailable (the lock gone);
    /// a serialization failure or a lock wait -> another attempt after a
    /// pause, unless the batch gave its payloads away (tried once).
    template <typename Store>
    Appended with_retries(int source_id, bool give_away, Store&& store);
    /// A batch of a source keyed by text, in one statement.
    Appended append_keyed(const Source& source, const Claim& claim, EventBatch& batch, const Progress& progress);
    /// Runs one statement outside a transaction block; after an error that
    /// left the session alive, makes sure the source's lock is not held.
    template <typename Statement>
    auto guarded(int source_id, Statement&& statement);
    void release_if_held(int source_id) noexcept;

    /// The lock argument of the closing functions: the namespace when this
    /// session holds the source's lock, else SQL NULL (it died with an
    /// earlier session, and unlocking would only earn a server warning).
    const char* lock_argument(int source_id);
    void note_lock(int source_id);
    void forget_lock(int source_id) { locks_.erase(source_id); }
    /// After a turn's last statement: forgets the lock, and on Citus lets
    /// it go (the functions, run on a worker, cannot).
    void let_go(int source_id);
    bool stopping() const { return stop_ != nullptr && stop_->stop_requested(); }
    /// Whether the log is distributed over Citus workers, asked once per
    /// session.
    bool distributed(pqxx::transaction_base& tx);

    PostgresSession& session_;
    const StopSignal* stop_;
    /// The source locks this worker's session holds, and which session that
    /// is: a new session holds none.
    std::unordered_set<int> locks_;
    /// Sources keyed by id whose last claim found a rewind being replayed:
    /// ids up to this may be stored already.
    std::unordered_map<int, std::int64_t> replays_;
    std::uint64_t locks_session_ = 0;
    bool distributed_ = false;
    std::uint64_t distributed_session_ = 0;
};

}  // namespace tributary::postgres
