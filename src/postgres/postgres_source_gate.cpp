#include "postgres_source_gate.h"

#include <string>

#include <spdlog/spdlog.h>

#include "advisory_keys.h"
#include "core/errors.h"
#include "success_close.h"

namespace tributary::postgres {

namespace {

constexpr const char* kTryPass = "tributary_gate_try_pass";
constexpr const char* kSuccess = "tributary_gate_success";
constexpr const char* kFailure = "tributary_gate_failure";
constexpr const char* kRelease = "tributary_gate_release";
constexpr const char* kReleaseIfHeld = "tributary_gate_release_if_held";

constexpr const char* kTryPassSql =
    "SELECT decision, failures, drained, lease, empty_streak, cursor FROM tributary.loader_claim($1, $2, $3)";
constexpr const char* kSuccessSql = "SELECT tributary.loader_close_succeeded($1, $2, $3, $4, $5, $6, $7)";
constexpr const char* kFailureSql = "SELECT tributary.loader_close_failed($1, $2, $3, $4, $5, $6)";
constexpr const char* kReleaseSql = "SELECT tributary.loader_close_released($1, $2, $3, $4)";
// Only a lock this session holds: unlocking one it does not earns a warning.
constexpr const char* kReleaseIfHeldSql =
    "SELECT pg_advisory_unlock($1, $2) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()"
    " AND granted AND classid = $1::oid AND objid = $2::oid AND objsubid = 2";

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
    session_.prepare(kReleaseIfHeld, kReleaseIfHeldSql);
}

template <typename Statement>
auto PostgresSourceGate::guarded(int source_id, Statement&& statement) {
    try {
        return session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            return statement(tx);
        });
    } catch (const DatabaseUnavailable&) {
        throw;  // the session, and every lock it held, is gone
    } catch (const std::exception&) {
        // The functions let the lock go when they fail, but a cancel can
        // land outside their reach: whatever happened, this worker must not
        // keep a lock it no longer knows it holds.
        release_if_held(source_id);
        throw;
    }
}

template <typename Statement>
void PostgresSourceGate::close(int source_id, Statement&& statement) {
    const char* lock = lock_to_release(session_.holds_source_lock(source_id));
    guarded(source_id, [&](pqxx::nontransaction& tx) { statement(tx, lock); });
    session_.forget_source_lock(source_id);
}

SourceGate::Pass PostgresSourceGate::try_pass(const Source& source) {
    // The request starts a little after this statement (cursor read, lock
    // waits up to lock_timeout): the margin keeps the lease covering all of it.
    const auto lease = source.endpoint.timeout + source.interval + kLeaseMargin;
    return guarded(source.id, [&](pqxx::nontransaction& tx) {
        const auto row = tx.exec_prepared1(kTryPass, source.id, kAdvisoryNamespace, lease.count());
        const auto decision = row[0].as<std::string>();
        Pass pass;
        if (decision == "locked") {
            pass.decision = Decision::locked;
            return pass;
        }
        pass.consecutive_failures = row[1].as<int>(0);
        pass.drained = row[2].as<bool>(false);
        pass.empty_streak = row[4].as<int>(0);
        if (decision == "pass") {
            session_.note_source_lock(source.id);
            pass.decision = Decision::pass;
            pass.lease = row[3].as<std::int64_t>();
            if (!row[5].is_null()) pass.cursor = row[5].as<std::int64_t>();
        } else {
            pass.decision = decision == "backing_off" ? Decision::backing_off : Decision::not_due;
        }
        return pass;
    });
}

void PostgresSourceGate::record_success(const Source& source, std::int64_t lease, const Success& success) {
    close(source.id, [&](pqxx::nontransaction& tx, const char* lock) {
        SuccessClose({source.id, source.interval, lease, success}, lock).run(tx, kSuccess);
    });
}

void PostgresSourceGate::release_slot(const Source& source, std::int64_t lease) {
    close(source.id, [&](pqxx::nontransaction& tx, const char* lock) {
        tx.exec_prepared(kRelease, source.id, lock, lease, source.interval.count());
    });
}

void PostgresSourceGate::record_failure(const Source& source, std::int64_t lease, Failure kind, const std::string& error,
                                        std::chrono::milliseconds delay) {
    close(source.id, [&](pqxx::nontransaction& tx, const char* lock) {
        tx.exec_prepared(kFailure, source.id, lock, lease, delay.count(), state_name(kind), storable(error));
    });
}

void PostgresSourceGate::release_if_held(int source_id) noexcept {
    session_.forget_source_lock(source_id);
    try {
        session_.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            tx.exec_prepared(kReleaseIfHeld, kAdvisoryNamespace, source_id);
        });
    } catch (const std::exception& e) {
        spdlog::warn("source_id={} could not release its lock after an error (it goes with the session): {}",
                     source_id, e.what());
    }
}

}  // namespace tributary::postgres
