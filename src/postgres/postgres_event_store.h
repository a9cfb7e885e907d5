#pragma once

#include <string>

#include "core/event_store.h"
#include "postgres_session.h"
#include "success_close.h"

namespace tributary::postgres {

/// EventStore on `tributary.events` and `tributary.cursors`. `append` is one
/// transaction: the compare-and-set on the cursor row first (so a second
/// writer waits on that row and then finds the cursor moved, instead of
/// inserting a batch only to have it refused), then the rows, then COMMIT.
/// A small batch is all that in one statement (tributary.loader_append), a
/// large one goes by COPY in BEGIN ... COMMIT. The slot's close, when given,
/// is part of the same transaction, and with it the source lock's release.
/// The unique key (source_id, event_id) is the last line of defence.
class PostgresEventStore : public EventStore {
public:
    explicit PostgresEventStore(PostgresSession& session);
    std::int64_t cursor(int source_id) override;
    AppendResult append(int source_id, std::int64_t expected_cursor, const EventBatch& batch,
                        const SourceGate::SlotSuccess* close = nullptr) override;

private:
    AppendResult append_once(int source_id, std::int64_t expected_cursor, const EventBatch& batch,
                             const SuccessClose* close);
    AppendResult append_in_one_statement(int source_id, std::int64_t expected_cursor, const EventBatch& batch,
                                         const SuccessClose* close);
    AppendResult append_by_copy(int source_id, std::int64_t expected_cursor, const EventBatch& batch,
                                const SuccessClose* close);
    void close_after_batch(const SuccessClose& close);

    PostgresSession& session_;
};

}  // namespace tributary::postgres
