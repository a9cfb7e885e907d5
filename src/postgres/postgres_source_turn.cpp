#include "postgres_source_turn.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>
#include <pqxx/stream_to>

#include "advisory_keys.h"
#include "core/errors.h"
#include "core/fault_points.h"
#include "postgres/statements.h"

namespace tributary::postgres {

/// Rows already in COPY's text format (see copy_rows), lines apart.
struct CopyText {
    const std::string& lines;
};

}  // namespace tributary::postgres

namespace pqxx {

/// Writes CopyText as it is. libpqxx 6.4 keeps its raw write private and
/// escapes every field of a tuple a byte at a time, which was a fifth of the
/// loader's CPU in bench/run's backlog; this specialisation of its own
/// template is the one way in that stays within its interface. (A write is
/// one line to libpqxx, which appends the last newline.)
template <>
stream_to& stream_to::operator<< <tributary::postgres::CopyText>(const tributary::postgres::CopyText& text) {
    write_raw_line(text.lines);
    return *this;
}

}  // namespace pqxx

namespace tributary::postgres {

namespace {

constexpr const char* kClaim = "tributary_turn_claim";
constexpr const char* kAppend = "tributary_turn_append";
constexpr const char* kAdvance = "tributary_turn_advance_cursor";
constexpr const char* kInsertOne = "tributary_turn_insert_one";
constexpr const char* kCloseInBatch = "tributary_turn_close_in_batch";
constexpr const char* kSucceeded = "tributary_turn_close_succeeded";
constexpr const char* kFailed = "tributary_turn_close_failed";
constexpr const char* kReleased = "tributary_turn_close_released";
constexpr const char* kReleaseIfHeld = "tributary_turn_release_if_held";
constexpr const char* kCursorAt = "tributary_turn_cursor_at";
constexpr const char* kAppendKeyed = "tributary_turn_append_keyed";
constexpr const char* kAppendReplay = "tributary_turn_append_replay";
constexpr const char* kLock = "tributary_turn_lock";
constexpr const char* kUnlock = "tributary_turn_unlock";

namespace sql = statements::source_turn;

/// The request starts a little after the claim (lock waits up to
/// lock_timeout, the loader's own bookkeeping): the margin keeps the lease
/// covering all of it.
constexpr std::chrono::milliseconds kLeaseMargin{5000};

/// Batches up to this size go in one statement (tributary.loader_append);
/// larger ones by COPY, whose per-row cost is lower. In bench/run's many
/// scenarios (1 000 sources), batches of 50 drained 10-30 % faster in one
/// statement than by COPY, batches of 100 20 % slower.
constexpr std::size_t kLargestStatementBatch = 50;

/// A batch with an event this large is stored row by row, each payload
/// moved into its statement (see the class comment).
constexpr std::size_t kLargePayload = 1 << 20;

/// Retries of a batch that lost a serialization race or a lock wait.
constexpr int kAttempts = 4;

const char* state_name(SlotClose::Failure kind) {
    switch (kind) {
        case SlotClose::Failure::throttled: return "throttled";
        case SlotClose::Failure::failing: return "failing";
        case SlotClose::Failure::transient: break;
    }
    return "transient";
}

/// Error texts quote what hostile sources sent: keep them to printable ASCII
/// and a sane length, so that storing the message can never fail.
std::string storable(const std::string& error) {
    constexpr std::size_t kMaxLength = 500;
    std::string out;
    for (const char ch : error) {
        if (out.size() == kMaxLength) return out + "...";
        const auto byte = static_cast<unsigned char>(ch);
        out += (byte >= 0x20 && byte < 0x7f) ? ch : '?';
    }
    return out;
}

/// Names a stranger chose (a role, an application): printable ASCII only,
/// so that they cannot split or forge a log line.
std::string printable(const std::string& text) {
    std::string out;
    for (const char ch : text.substr(0, 200)) {
        const auto byte = static_cast<unsigned char>(ch);
        out += (byte >= 0x20 && byte < 0x7f) ? ch : '?';
    }
    return out;
}

/// A backlog as a statement argument: its digits, or SQL NULL (libpqxx 6.4
/// passes a null pointer as NULL).
struct NullableInt {
    explicit NullableInt(std::optional<std::int64_t> value) : text(value ? std::to_string(*value) : std::string()) {}
    const char* get() const { return text.empty() ? nullptr : text.c_str(); }
    std::string text;
};

/// The ids as a PostgreSQL array literal: {1,2,3}.
std::string id_array(const EventBatch& batch) {
    std::string out = "{";
    for (const auto& event : batch) {
        if (out.size() > 1) out += ',';
        out += std::to_string(event.id);
    }
    return out + '}';
}

/// The payloads as one JSON array: each source text as it came. With
/// `give_away`, each payload is released once copied, so that the batch is
/// not held twice.
std::string payload_array(EventBatch& batch, bool give_away) {
    std::size_t size = 2;
    for (const auto& event : batch) size += event.payload.size() + 1;
    std::string out;
    out.reserve(size);
    out += '[';
    for (auto& event : batch) {
        if (out.size() > 1) out += ',';
        out += event.payload;
        if (give_away) std::string().swap(event.payload);
    }
    out += ']';
    return out;
}

/// The keys as one JSON array of strings.
std::string key_array(const EventBatch& batch) {
    auto keys = nlohmann::json::array();
    for (const auto& event : batch) keys.push_back(event.key);
    return keys.dump();
}

std::size_t payload_bytes(const EventBatch& batch) {
    std::size_t bytes = 0;
    for (const auto& event : batch) bytes += event.payload.size();
    return bytes;
}

/// Whether 8 bytes hold one that COPY's text format must escape in a
/// payload: a backslash, newline, carriage return or tab (the delimiter).
/// A payload is valid JSON, so no other control byte can be in it.
bool copy_plain(std::uint64_t word) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kHigh = 0x8080808080808080ULL;
    const auto has_byte = [](std::uint64_t w, unsigned char b) {
        const std::uint64_t x = w ^ (kOnes * b);
        return ((x - kOnes) & ~x & kHigh) != 0;
    };
    return !has_byte(word, '\\') && !has_byte(word, '\n') && !has_byte(word, '\r') && !has_byte(word, '\t');
}

/// `text` as a field of COPY's text format. Most payloads have nothing to
/// escape and are appended 8 bytes at a time: libpqxx's own escaping, a
/// byte at a time, was a fifth of the loader's CPU in bench/run's backlog.
void append_copy_field(std::string& out, const std::string& text) {
    const char* p = text.data();
    const char* const end = p + text.size();
    while (p < end) {
        const char* run = p;
        while (end - p >= 8) {
            std::uint64_t word;
            std::memcpy(&word, p, 8);
            if (!copy_plain(word)) break;
            p += 8;
        }
        while (p < end && *p != '\\' && *p != '\n' && *p != '\r' && *p != '\t') ++p;
        out.append(run, static_cast<std::size_t>(p - run));
        if (p == end) break;
        switch (*p++) {
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            default: out += "\\t"; break;
        }
    }
}

/// Rows [first, last) of the batch in COPY's text format, lines apart
/// (the last without its newline, which libpqxx adds).
std::string copy_rows(int source_id, const EventBatch& batch, std::size_t first, std::size_t last) {
    std::size_t size = 0;
    for (std::size_t i = first; i < last; ++i) size += batch[i].payload.size() + 32;
    std::string out;
    out.reserve(size);
    const std::string source = std::to_string(source_id) + '\t';
    for (std::size_t i = first; i < last; ++i) {
        if (i > first) out += '\n';
        out += source;
        out += std::to_string(batch[i].id);
        out += '\t';
        append_copy_field(out, batch[i].payload);
    }
    return out;
}

/// Waits a jittered, growing moment before retrying a transaction that lost
/// a serialization race or a lock.
void pause_before_retry(int attempt) {
    thread_local std::mt19937 random{std::random_device{}()};
    std::uniform_int_distribution<int> jitter(0, 20 << attempt);
    std::this_thread::sleep_for(std::chrono::milliseconds(10 + jitter(random)));
}

}  // namespace

/// The success close a stored batch ends its turn with: not drained, the
/// next request after the interval (loader_append's last four arguments).
struct PostgresSourceTurn::BatchClose {
    int source_id;
    const char* lock;
    std::int64_t lease;
    std::int64_t interval_ms;
    NullableInt backlog;

    void run(pqxx::transaction_base& tx, const char* statement) const {
        tx.exec_prepared(statement, source_id, lock, lease, interval_ms, interval_ms, false, backlog.get());
    }
};

PostgresSourceTurn::PostgresSourceTurn(PostgresSession& session, const StopSignal* stop)
    : session_(session), stop_(stop) {
    session_.prepare(kClaim, sql::claim);
    session_.prepare(kAppend, sql::append);
    session_.prepare(kAdvance, sql::advance_cursor);
    session_.prepare(kInsertOne, sql::insert_one);
    session_.prepare(kCloseInBatch, sql::close_in_batch);
    session_.prepare(kSucceeded, sql::close_succeeded);
    session_.prepare(kFailed, sql::close_failed);
    session_.prepare(kReleased, sql::close_released);
    session_.prepare(kReleaseIfHeld, sql::release_if_held);
    session_.prepare(kCursorAt, sql::cursor_at);
    session_.prepare(kAppendKeyed, sql::append_keyed);
    session_.prepare(kAppendReplay, sql::append_replay);
    session_.prepare(kLock, sql::lock);
    session_.prepare(kUnlock, sql::unlock);
}

bool PostgresSourceTurn::distributed(pqxx::transaction_base& tx) {
    if (distributed_session_ != session_.generation()) {
        distributed_ = tx.exec1(sql::has_citus)[0].as<bool>() && tx.exec1(sql::log_is_distributed)[0].as<bool>();
        distributed_session_ = session_.generation();
    }
    return distributed_;
}

void PostgresSourceTurn::let_go(int source_id) {
    const bool held = locks_session_ == session_.generation() && locks_.count(source_id) > 0;
    forget_lock(source_id);
    if (!held || !distributed_ || distributed_session_ != session_.generation()) return;
    // The functions ran on a worker; the lock is this session's own.
    try {
        session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            tx.exec_prepared(kUnlock, kAdvisoryNamespace, source_id);
        });
    } catch (const std::exception& e) {
        spdlog::warn("source_id={} could not let its lock go (it goes with the session): {}", source_id, e.what());
    }
}

void PostgresSourceTurn::note_lock(int source_id) {
    if (locks_session_ != session_.generation()) {
        locks_.clear();
        locks_session_ = session_.generation();
    }
    locks_.insert(source_id);
}

const char* PostgresSourceTurn::lock_argument(int source_id) {
    const bool held = locks_session_ == session_.generation() && session_.connected() && locks_.count(source_id) > 0;
    // On Citus the functions never touch the lock: let_go does.
    return lock_to_release(held && !distributed_);
}

template <typename Statement>
auto PostgresSourceTurn::guarded(int source_id, Statement&& statement) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            return statement(tx);
        });
    } catch (const DatabaseUnavailable&) {
        forget_lock(source_id);  // the session, and every lock it held, is gone
        throw;
    } catch (const std::exception&) {
        // The functions let the lock go when they fail, but a cancel can
        // land outside their reach: whatever happened, this worker must not
        // keep a lock it no longer knows it holds.
        release_if_held(source_id);
        throw;
    }
}

SourceTurn::Claim PostgresSourceTurn::claim(const Source& source) {
    const auto lease = source.endpoint.timeout + source.interval + kLeaseMargin;
    return guarded(source.id, [&](pqxx::nontransaction& tx) {
        Claim claim;
        // On Citus the claim runs on a worker: the lock is taken here first,
        // in this session on the coordinator (sql/citus/10_delegation.sql).
        const bool lock_here = distributed(tx);
        if (lock_here) {
            if (!tx.exec_prepared1(kLock, kAdvisoryNamespace, source.id)[0].as<bool>()) {
                claim.decision = Decision::locked;
                return claim;
            }
            note_lock(source.id);
        }
        const auto row =
            tx.exec_prepared1(kClaim, source.id, lock_to_release(!lock_here), lease.count(), source.revision);
        const auto decision = row[0].as<std::string>();
        if (decision == "locked") {
            claim.decision = Decision::locked;
            return claim;
        }
        claim.consecutive_failures = row[1].as<int>(0);
        claim.drained = row[2].as<bool>(false);
        claim.empty_streak = row[4].as<int>(0);
        if (decision == "pass") {
            note_lock(source.id);
            claim.decision = Decision::pass;
            claim.lease = row[3].as<std::int64_t>();
            claim.cursor = source.keyed_by_id() ? Cursor::at_id(row[5].as<std::int64_t>(0))
                                                : Cursor::at(row[6].as<std::string>(""), row[7].as<std::int64_t>(0));
            if (row[8].is_null()) replays_.erase(source.id);
            else replays_[source.id] = row[8].as<std::int64_t>();
        } else {
            // 'changed': an edit of the source's settings came after the
            // schedule this claim was made from; not due with these
            // settings, and the next schedule brings the new ones.
            claim.decision = decision == "backing_off" ? Decision::backing_off : Decision::not_due;
            if (lock_here) {
                tx.exec_prepared(kUnlock, kAdvisoryNamespace, source.id);
                forget_lock(source.id);
            }
        }
        return claim;
    });
}

void PostgresSourceTurn::close(const Source& source, const SlotClose& close) {
    const char* lock = lock_argument(source.id);
    guarded(source.id, [&](pqxx::nontransaction& tx) {
        switch (close.kind) {
            case SlotClose::Kind::succeeded:
                tx.exec_prepared(kSucceeded, source.id, lock, close.lease, close.pause.count(), source.interval.count(),
                                 close.drained, NullableInt(close.backlog).get());
                return;
            case SlotClose::Kind::failed:
                tx.exec_prepared(kFailed, source.id, lock, close.lease, close.pause.count(), state_name(close.failure),
                                 storable(close.error));
                return;
            case SlotClose::Kind::released:
                tx.exec_prepared(kReleased, source.id, lock, close.lease, source.interval.count());
                return;
        }
    });
    let_go(source.id);
}

std::optional<LockHolder> PostgresSourceTurn::stranger_holding(const Source& source) {
    try {
        return session_.run([&](pqxx::connection& c) -> std::optional<LockHolder> {
            pqxx::nontransaction tx(c);
            const auto rows = tx.exec_params(sql::lock_stranger, source.id);
            if (rows.empty()) return std::nullopt;
            const auto& row = rows[0];
            return LockHolder{row[0].as<int>(0), printable(row[1].as<std::string>("")),
                              printable(row[2].as<std::string>("")), row[3].as<std::string>(""),
                              row[4].as<std::string>("")};
        });
    } catch (const DatabaseUnavailable&) {
        throw;
    } catch (const std::exception& e) {
        // E.g. definitions older than this binary: the loader works on.
        spdlog::debug("source={} cannot tell who holds its lock: {}", source.name, e.what());
        return std::nullopt;
    }
}

void PostgresSourceTurn::release_if_held(int source_id) noexcept {
    forget_lock(source_id);
    try {
        session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            tx.exec_prepared(kReleaseIfHeld, kAdvisoryNamespace, source_id);
        });
    } catch (const std::exception& e) {
        spdlog::warn("source_id={} could not release its lock after an error (it goes with the session): {}", source_id,
                     e.what());
    }
}

SourceTurn::Appended PostgresSourceTurn::append_and_close(const Source& source, const Claim& claim, EventBatch batch,
                                                          Progress progress) {
    if (!source.keyed_by_id()) return append_keyed(source, claim, batch, progress);
    // A pause longer than the interval is a spent rate limit: a nudge must
    // not shorten it, so it stands in for the interval too.
    const BatchClose close{source.id, lock_argument(source.id), claim.lease,
                           std::max(progress.pause, source.interval).count(), NullableInt(progress.backlog)};
    const std::int64_t expected = claim.cursor.id();
    if (const auto replay = replays_.find(source.id);
        replay != replays_.end() && !batch.empty() && batch.front().id <= replay->second)
        return append_replay(source, expected, batch, close);
    const bool large = std::any_of(batch.begin(), batch.end(),
                                   [](const Event& event) { return event.payload.size() >= kLargePayload; });
    // On Citus every batch goes in one statement: the function runs on the
    // source's worker, where its rows take that worker's transaction id
    // (COPY through the coordinator would stamp the coordinator's, and
    // commit in two phases).
    const bool one_statement = distributed_ || (!large && batch.size() <= kLargestStatementBatch);
    // A large batch gives its payloads away: it is tried once (a conflict or
    // an error then closes the turn as usual, and the next turn fetches it
    // again). So does a one-statement batch of 1 MiB or more in all: its
    // payloads become the statement's JSON array, moved into libpq's hands.
    const bool give_away = large || (one_statement && payload_bytes(batch) >= kLargePayload);
    return with_retries(source.id, give_away, [&]() -> Appended {
        try {
            const auto stored = one_statement ? append_in_one_statement(source, expected, batch, close, give_away)
                                : large       ? append_large(source, expected, batch, close)
                                              : append_by_copy(source, expected, batch, close);
            if (large) session_.recycle();
            let_go(source.id);
            return {stored, 0};
        } catch (const pqxx::unique_violation&) {
            // Another writer stored these ids first (COPY: the transaction
            // is gone, close and all; one statement handles it itself).
            close_after_batch(close);
            return {Stored::duplicate, 0};
        }
    });
}

template <typename Store>
SourceTurn::Appended PostgresSourceTurn::with_retries(int source_id, bool give_away, Store&& store) {
    for (int attempt = 1;; ++attempt) {
        try {
            return store();
        } catch (const pqxx::data_exception& e) {
            throw BatchRejected(e.what());
        } catch (const pqxx::statement_completion_unknown& e) {
            forget_lock(source_id);
            throw DatabaseUnavailable(std::string("COMMIT outcome unknown: ") + e.what());
        } catch (const DatabaseUnavailable&) {
            forget_lock(source_id);
            throw;
        } catch (const pqxx::transaction_rollback&) {
            // 40001, 40P01 (libpqxx 6.4 does not derive these from sql_error).
            if (give_away || attempt == kAttempts || stopping()) throw;
            pause_before_retry(attempt);
        } catch (const pqxx::sql_error& e) {
            // 55P03 included: each attempt may wait lock_timeout, and a
            // stopping loader would wait out all of them.
            if (give_away || !is_retryable(e) || attempt == kAttempts || stopping()) throw;
            pause_before_retry(attempt);
        }
    }
}

SourceTurn::Appended PostgresSourceTurn::append_keyed(const Source& source, const Claim& claim, EventBatch& batch,
                                                      const Progress& progress) {
    const Cursor& next = progress.next ? *progress.next : claim.cursor;
    const auto pause = std::max(progress.pause, source.interval);
    const auto keys = key_array(batch);
    // A batch of 1 MiB or more gives its payloads away into the statement's
    // array, and is tried once.
    const bool give_away = payload_bytes(batch) >= kLargePayload;
    auto payloads = payload_array(batch, give_away);
    const char* lock = lock_argument(source.id);
    return with_retries(source.id, give_away, [&]() -> Appended {
        // -1: the cursor was not the claim's (the function says NULL).
        const std::int64_t skipped = session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            fault_point("mid_insert");
            fault_point("during_commit");
            return tx
                .exec_prepared1(kAppendKeyed, source.id, claim.cursor.position(), claim.cursor.taken(), next.position(),
                                next.taken(), keys, payloads, lock, claim.lease, pause.count(), progress.drained,
                                NullableInt(progress.backlog).get(), std::max(progress.idle_pause, pause).count())[0]
                .as<std::int64_t>(-1);
        });
        let_go(source.id);
        if (skipped < 0) return {Stored::conflict, 0};
        return {Stored::appended, static_cast<std::size_t>(skipped)};
    });
}

SourceTurn::Appended PostgresSourceTurn::append_replay(const Source& source, std::int64_t expected, EventBatch& batch,
                                                       const BatchClose& close) {
    const auto ids = id_array(batch);
    const auto payloads = payload_array(batch, false);
    return guarded(source.id, [&](pqxx::nontransaction& tx) -> Appended {
        const auto skipped = tx.exec_prepared1(kAppendReplay, source.id, expected, ids, payloads, close.lock,
                                               close.lease, close.interval_ms, close.backlog.get())[0]
                                 .as<std::int64_t>(-1);
        let_go(source.id);
        if (skipped < 0) return {Stored::duplicate, 0};
        return {Stored::appended, static_cast<std::size_t>(skipped)};
    });
}

void PostgresSourceTurn::close_after_batch(const BatchClose& close) {
    guarded(close.source_id, [&](pqxx::nontransaction& tx) { close.run(tx, kSucceeded); });
    let_go(close.source_id);
}

SourceTurn::Stored PostgresSourceTurn::append_in_one_statement(const Source& source, std::int64_t expected,
                                                               EventBatch& batch, const BatchClose& close,
                                                               bool give_away) {
    const auto ids = id_array(batch);
    auto payloads = payload_array(batch, give_away);
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        // The statement is the transaction: dying before it stores nothing,
        // dying while it is on the wire leaves its outcome unknown.
        fault_point("mid_insert");
        fault_point("during_commit");
        // Moved, the array is not copied again into the statement's
        // parameters; libpq's send buffer is then its only other copy.
        const bool appended = tx.exec_prepared1(kAppend, source.id, expected, ids, std::move(payloads), close.lock,
                                                close.lease, close.interval_ms, close.backlog.get())[0]
                                  .as<bool>();
        if (appended) return Stored::appended;
        // loader_append says false for both; they mean different things to
        // an operator. A cursor still at `expected` had passed the
        // compare-and-set: a unique key refused the rows.
        const auto cursor = tx.exec_prepared(kCursorAt, source.id);
        const bool unmoved = !cursor.empty() && cursor[0][0].as<std::int64_t>(expected - 1) == expected;
        return unmoved ? Stored::duplicate : Stored::conflict;
    });
}

SourceTurn::Stored PostgresSourceTurn::append_by_copy(const Source& source, std::int64_t expected,
                                                      const EventBatch& batch, const BatchClose& close) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto moved =
            tx.exec_prepared(kAdvance, source.id, expected, batch.back().id, static_cast<std::int64_t>(batch.size()));
        if (moved.affected_rows() != 1) {  // nothing stored; the close commits alone
            close.run(tx, kCloseInBatch);
            tx.commit();
            return Stored::conflict;
        }
        pqxx::stream_to rows(tx, "tributary.events", std::vector<std::string>{"source_id", "event_id", "payload"});
        // Two writes of many rows each, the fault point between them.
        const std::size_t half = batch.size() / 2;
        if (half > 0) rows << CopyText{copy_rows(source.id, batch, 0, half)};
        fault_point("mid_insert");
        rows << CopyText{copy_rows(source.id, batch, half, batch.size())};
        rows.complete();
        close.run(tx, kCloseInBatch);
        fault_point("during_commit");
        tx.commit();
        return Stored::appended;
    });
}

SourceTurn::Stored PostgresSourceTurn::append_large(const Source& source, std::int64_t expected, EventBatch& batch,
                                                    const BatchClose& close) {
    return session_.run([&](pqxx::connection& c) {
        pqxx::work tx(c);
        const auto last_id = batch.back().id;
        const auto moved =
            tx.exec_prepared(kAdvance, source.id, expected, last_id, static_cast<std::int64_t>(batch.size()));
        if (moved.affected_rows() != 1) {  // nothing stored; the close commits alone
            close.run(tx, kCloseInBatch);
            tx.commit();
            return Stored::conflict;
        }
        const std::size_t half = batch.size() / 2;
        for (std::size_t i = 0; i < batch.size(); ++i) {
            if (i == half) fault_point("mid_insert");
            // Moved, not copied: libpqxx keeps the parameter's string as it
            // is, and libpq's send buffer is the only other copy.
            tx.exec_prepared(kInsertOne, source.id, batch[i].id, std::move(batch[i].payload));
            batch[i].payload = std::string();
        }
        close.run(tx, kCloseInBatch);
        fault_point("during_commit");
        tx.commit();
        return Stored::appended;
    });
}

}  // namespace tributary::postgres
