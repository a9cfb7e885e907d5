#include "postgres_source_gate.h"

namespace tributary::postgres {

namespace {

constexpr const char* kTryPass = "tributary_gate_try_pass";
constexpr const char* kSuccess = "tributary_gate_success";
constexpr const char* kFailure = "tributary_gate_failure";
constexpr const char* kRelease = "tributary_gate_release";

// One statement decides and, when due, claims: the CTE claims the slot and
// reads the cursor (saving the loader a round trip; the statement starts
// after the source's lock was taken, so it sees every batch committed
// before); the second branch reports why not (a row always exists).
constexpr const char* kTryPassSql = R"sql(
WITH claimed AS (
    UPDATE tributary.gates
       SET last_request = now(),
           next_allowed_at = now() + make_interval(secs => $2::double precision / 1000),
           lease = lease + 1
     WHERE source_id = $1 AND next_allowed_at <= now()
 RETURNING failures, drained, lease, empty_streak)
SELECT true, failures, drained, lease, empty_streak,
       (SELECT last_event_id FROM tributary.cursors WHERE source_id = $1)
  FROM claimed
UNION ALL
SELECT false, failures, drained, lease, empty_streak, NULL FROM tributary.gates
 WHERE source_id = $1 AND NOT EXISTS (SELECT FROM claimed))sql";

// A nudge that came while the request was in flight (nudged_at after
// last_request) means "there is more": the next request after the interval,
// not the idle pause, and the empty streak ends.
constexpr const char* kSuccessSql = R"sql(
UPDATE tributary.gates
   SET next_allowed_at = now() + make_interval(secs => (CASE WHEN nudged_at >= last_request THEN $6 ELSE $2 END)
                                                      ::double precision / 1000),
       last_success_at = now(), failures = 0, state = 'ok', drained = $3,
       empty_streak = CASE WHEN $3 AND NOT coalesce(nudged_at >= last_request, false) THEN empty_streak + 1 ELSE 0 END,
       backlog = $4, closed_lease = $5
 WHERE source_id = $1 AND lease = $5 AND closed_lease <> $5)sql";

constexpr const char* kReleaseSql = R"sql(
UPDATE tributary.gates
   SET next_allowed_at = now() + make_interval(secs => $2::double precision / 1000), closed_lease = $3
 WHERE source_id = $1 AND lease = $3 AND closed_lease <> $3)sql";

constexpr const char* kFailureSql = R"sql(
UPDATE tributary.gates
   SET next_allowed_at = now() + make_interval(secs => $2::double precision / 1000),
       failures = failures + 1, state = $3, last_error = $4, last_error_at = now(), drained = false,
       closed_lease = $5
 WHERE source_id = $1 AND lease = $5 AND closed_lease <> $5)sql";

constexpr std::chrono::milliseconds kLeaseMargin{5000};

const char* state_name(SourceGate::Failure kind) {
    switch (kind) {
        case SourceGate::Failure::throttled: return "throttled";
        case SourceGate::Failure::failing: return "failing";
        case SourceGate::Failure::transient: break;
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

}  // namespace

PostgresSourceGate::PostgresSourceGate(PostgresSession& session) : session_(session) {
    session_.prepare(kTryPass, kTryPassSql);
    session_.prepare(kSuccess, kSuccessSql);
    session_.prepare(kFailure, kFailureSql);
    session_.prepare(kRelease, kReleaseSql);
}

SourceGate::Pass PostgresSourceGate::try_pass(const Source& source) {
    // The request starts a little after this statement (cursor read, lock
    // waits up to lock_timeout): the margin keeps the lease covering all of it.
    const auto lease = source.endpoint.timeout + source.interval + kLeaseMargin;
    return session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        const auto rows = tx.exec_prepared(kTryPass, source.id, lease.count());
        if (rows.empty()) return Pass{};  // source removed meanwhile: not due
        const bool passed = rows[0][0].as<bool>();
        Pass pass;
        pass.consecutive_failures = rows[0][1].as<int>();
        pass.drained = rows[0][2].as<bool>();
        pass.empty_streak = rows[0][4].as<int>();
        if (passed) {
            pass.decision = Decision::pass;
            pass.lease = rows[0][3].as<std::int64_t>();
            if (!rows[0][5].is_null()) pass.cursor = rows[0][5].as<std::int64_t>();
        } else {
            pass.decision = pass.consecutive_failures > 0 ? Decision::backing_off : Decision::not_due;
        }
        return pass;
    });
}

void PostgresSourceGate::record_success(const Source& source, std::int64_t lease, const Success& success) {
    session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        // libpqxx 6.4 passes a null pointer as SQL NULL.
        const auto& backlog = success.backlog;
        const std::string backlog_text = backlog ? std::to_string(*backlog) : std::string();
        tx.exec_prepared(kSuccess, source.id, success.pause.count(), success.drained,
                         backlog ? backlog_text.c_str() : static_cast<const char*>(nullptr), lease,
                         source.interval.count());
    });
}

void PostgresSourceGate::release_slot(const Source& source, std::int64_t lease) {
    session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        tx.exec_prepared(kRelease, source.id, source.interval.count(), lease);
    });
}

void PostgresSourceGate::record_failure(const Source& source, std::int64_t lease, Failure kind, const std::string& error,
                                        std::chrono::milliseconds delay) {
    session_.run([&](pqxx::connection& c) {
        pqxx::nontransaction tx(c);
        tx.exec_prepared(kFailure, source.id, delay.count(), state_name(kind), storable(error), lease);
    });
}

}  // namespace tributary::postgres
