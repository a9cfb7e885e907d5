#include "postgres_event_store.h"

#include <chrono>
#include <optional>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include <pqxx/stream_to>

#include "core/errors.h"
#include "core/fault_points.h"
#include "advisory_keys.h"

namespace tributary::postgres {

namespace {

constexpr const char* kCursor = "tributary_read_cursor";
constexpr const char* kAdvance = "tributary_advance_cursor";
constexpr const char* kAppend = "tributary_append_small";
constexpr const char* kCloseInBatch = "tributary_close_in_batch";
constexpr const char* kCloseAfterBatch = "tributary_close_after_batch";
constexpr int kAttempts = 4;

/// Batches up to this size go in one statement (tributary.loader_append);
/// larger ones by COPY, whose per-row cost is lower. In bench/run's many
/// scenarios (1 000 sources), batches of 50 drained 10-30 % faster in one
/// statement than by COPY, batches of 100 20 % slower.
constexpr std::size_t kLargestStatementBatch = 50;

/// The ids as a PostgreSQL array literal: {1,2,3}.
std::string id_array(const EventBatch& batch) {
    std::string out = "{";
    for (const auto& event : batch) {
        if (out.size() > 1) out += ',';
        out += std::to_string(event.id);
    }
    return out + '}';
}

/// The payloads as one JSON array: each source text as it came.
std::string payload_array(const EventBatch& batch) {
    std::size_t size = 2;
    for (const auto& event : batch) size += event.payload.size() + 1;
    std::string out;
    out.reserve(size);
    out += '[';
    for (const auto& event : batch) {
        if (out.size() > 1) out += ',';
        out += event.payload;
    }
    return out + ']';
}

/// Waits a jittered, growing moment before retrying a transaction that lost
/// a serialization race or a lock.
void pause_before_retry(int attempt) {
    thread_local std::mt19937 random{std::random_device{}()};
    std::uniform_int_distribution<int> jitter(0, 20 << attempt);
    std::this_thread::sleep_for(std::chrono::milliseconds(10 + jitter(random)));
}

}  // namespace

PostgresEventStore::PostgresEventStore(PostgresSession& session) : session_(session) {
    session_.prepare(kCursor, "SELECT last_event_id FROM tributary.cursors WHERE source_id = $1");
    session_.prepare(kAdvance,
                     "UPDATE tributary.cursors"
                     "   SET last_event_id = $3, events_stored = events_stored + $4, last_stored_at = now()"
                     " WHERE source_id = $1 AND last_event_id = $2");
    session_.prepare(kAppend, "SELECT tributary.loader_append($1, $2, $3::bigint[], $4::jsonb, $5, $6, $7, $8)");
    session_.prepare(kCloseInBatch, "SELECT tributary.loader_gate_succeeded($1, $2, $3, $4, $5, $6, $7)");
    session_.prepare(kCloseAfterBatch, "SELECT tributary.loader_close_succeeded($1, $2, $3, $4, $5, $6, $7)");
}

std::int64_t PostgresEventStore::cursor(int source_id) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        const auto rows = tx.exec_prepared(kCursor, source_id);
        if (rows.empty()) throw std::runtime_error("no cursor row for source id " + std::to_string(source_id));
        return rows[0][0].as<std::int64_t>();
    });
}

EventStore::AppendResult PostgresEventStore::append(int source_id, std::int64_t expected_cursor,
                                                    const EventBatch& batch, const SourceGate::SlotSuccess* close) {
    const auto closing =
        close ? std::optional<SuccessClose>(std::in_place, *close,
                                            lock_to_release(session_.holds_source_lock(close->source_id)))
              : std::nullopt;
    const SuccessClose* with = closing ? &*closing : nullptr;
    for (int attempt = 1;; ++attempt) {
        try {
            const auto result = append_once(source_id, expected_cursor, batch, with);
            if (close) session_.forget_source_lock(close->source_id);
            return result;
        } catch (const pqxx::unique_violation&) {
            // Another writer stored these ids first (COPY: the transaction
            // is gone, close and all; one statement handles it itself).
            if (with) close_after_batch(*with);
            return AppendResult::conflict;
        } catch (const pqxx::data_exception& e) {
            throw BatchRejected(e.what());
        } catch (const pqxx::statement_completion_unknown& e) {
            throw DatabaseUnavailable(std::string("COMMIT outcome unknown: ") + e.what());
        } catch (const pqxx::transaction_rollback& e) {
            // 40001, 40P01 (libpqxx 6.4 does not derive these from sql_error).
            if (attempt == kAttempts) throw;
            pause_before_retry(attempt);
        } catch (const pqxx::sql_error& e) {
            if (!is_retryable(e) || attempt == kAttempts) throw;
            pause_before_retry(attempt);
        }
    }
}

void PostgresEventStore::close_after_batch(const SuccessClose& close) {
    session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        close.run(tx, kCloseAfterBatch);
    });
    session_.forget_source_lock(close.source_id());
}

EventStore::AppendResult PostgresEventStore::append_once(int source_id, std::int64_t expected_cursor,
                                                         const EventBatch& batch, const SuccessClose* close) {
    return batch.size() <= kLargestStatementBatch ? append_in_one_statement(source_id, expected_cursor, batch, close)
                                                  : append_by_copy(source_id, expected_cursor, batch, close);
}

EventStore::AppendResult PostgresEventStore::append_in_one_statement(int source_id, std::int64_t expected_cursor,
                                                                     const EventBatch& batch, const SuccessClose* close) {
    const auto ids = id_array(batch);
    const auto payloads = payload_array(batch);
    // Without a close, NULLs: the function's close then matches no lease.
    const char* lock = close ? close->lock() : nullptr;
    const std::string lease_text = close ? std::to_string(close->lease()) : std::string();
    const char* lease = close ? lease_text.c_str() : nullptr;
    const auto interval = close ? close->interval_ms() : 0;
    const char* backlog = close ? close->backlog() : nullptr;
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        // The statement is the transaction: dying before it stores nothing,
        // dying while it is on the wire leaves its outcome unknown.
        fault_point("mid_insert");
        fault_point("during_commit");
        const bool appended =
            tx.exec_prepared1(kAppend, source_id, expected_cursor, ids, payloads, lock, lease, interval, backlog)[0]
                .as<bool>();
        return appended ? AppendResult::appended : AppendResult::conflict;
    });
}

EventStore::AppendResult PostgresEventStore::append_by_copy(int source_id, std::int64_t expected_cursor,
                                                            const EventBatch& batch, const SuccessClose* close) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto close_in_batch = [&] {
            if (close) close->run(tx, kCloseInBatch);
        };
        const auto moved = tx.exec_prepared(kAdvance, source_id, expected_cursor, batch.back().id,
                                            static_cast<std::int64_t>(batch.size()));
        if (moved.affected_rows() != 1) {  // nothing stored; the close, if any, commits alone
            if (!close) return AppendResult::conflict;
            close_in_batch();
            tx.commit();
            return AppendResult::conflict;
        }
        pqxx::stream_to rows(tx, "tributary.events", std::vector<std::string>{"source_id", "event_id", "payload"});
        const std::size_t half = batch.size() / 2;
        for (std::size_t i = 0; i < batch.size(); ++i) {
            if (i == half) fault_point("mid_insert");
            rows << std::make_tuple(source_id, batch[i].id, batch[i].payload);
        }
        rows.complete();
        close_in_batch();
        fault_point("during_commit");
        tx.commit();
        return AppendResult::appended;
    });
}

}  // namespace tributary::postgres
