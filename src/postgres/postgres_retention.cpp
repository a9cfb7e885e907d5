#include "postgres_retention.h"

#include <memory>
#include <stdexcept>

#include <libpq-fe.h>
#include <nlohmann/json.hpp>

#include "api_call.h"
#include "json_names.h"
#include "optional_field.h"
#include "postgres/statements.h"
#include "session_settings.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

namespace sql = statements::retention;

constexpr const char* kLockNotAvailable = "55P03";

struct ConnectionCloser {
    void operator()(PGconn* c) const { PQfinish(c); }
};
struct ResultClearer {
    void operator()(PGresult* r) const { PQclear(r); }
};

}  // namespace

std::vector<maintenance::PartitionRetention> PostgresRetention::partitions() {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        std::vector<maintenance::PartitionRetention> out;
        for (const auto& row : tx.exec(sql::partitions)) {
            maintenance::PartitionRetention p;
            p.name = row[0].as<std::string>();
            p.from_tx = row[1].as<std::string>();
            p.to_tx = row[2].as<std::string>();
            p.state = row[3].as<std::string>();
            p.bytes = optional_field<std::int64_t>(row[4]);
            p.held_by = json_names(row[5]);
            p.drop_unconsumed = row[6].as<bool>();
            p.archive = row[7].as<bool>();
            p.archive_failures = row[8].as<int>();
            out.push_back(std::move(p));
        }
        return out;
    });
}

void PostgresRetention::stream_partition(const std::string& name, const std::string& format,
                                         const std::function<bool(const char*, std::size_t)>& sink) {
    const auto copy = api_call(session_, [&](pqxx::nontransaction& tx) {
        return tx.exec_params(sql::copy_statement, name, format)[0][0].as<std::string>();
    });
    // The session's keepalives and connect timeout too: a database host that
    // vanishes mid-COPY must fail the archive, not hang the maintainer.
    std::unique_ptr<PGconn, ConnectionCloser> conn(PQconnectdb(with_connection_defaults(conninfo_).c_str()));
    if (PQstatus(conn.get()) != CONNECTION_OK)
        throw std::runtime_error(std::string("archive: cannot connect: ") + PQerrorMessage(conn.get()));
    std::unique_ptr<PGresult, ResultClearer> unlimited(PQexec(conn.get(), sql::copy_session));
    if (PQresultStatus(unlimited.get()) != PGRES_TUPLES_OK)
        throw std::runtime_error(std::string("archive: ") + PQerrorMessage(conn.get()));
    std::unique_ptr<PGresult, ResultClearer> started(PQexec(conn.get(), copy.c_str()));
    if (PQresultStatus(started.get()) != PGRES_COPY_OUT)
        throw std::runtime_error(std::string("archive: COPY failed: ") + PQerrorMessage(conn.get()));
    bool reading = true;
    for (;;) {
        char* buffer = nullptr;
        const int n = PQgetCopyData(conn.get(), &buffer, 0);
        if (n > 0) {
            std::unique_ptr<char, decltype(&PQfreemem)> chunk(buffer, &PQfreemem);  // freed if sink throws
            if (reading) reading = sink(chunk.get(), static_cast<std::size_t>(n));
            // A command that stopped reading: the rest is not wanted. The
            // connection is closed below, which ends the COPY.
            if (!reading) return;
            continue;
        }
        if (n == -2) throw std::runtime_error(std::string("archive: COPY failed: ") + PQerrorMessage(conn.get()));
        break;
    }
    std::unique_ptr<PGresult, ResultClearer> ended(PQgetResult(conn.get()));
    if (PQresultStatus(ended.get()) != PGRES_COMMAND_OK)
        throw std::runtime_error(std::string("archive: COPY failed: ") + PQerrorMessage(conn.get()));
}

MaintainerFence& PostgresRetention::fence() {
    if (fence_ == nullptr) throw std::logic_error("retention: a change to the catalogue needs the maintainer's fence");
    return *fence_;
}

void PostgresRetention::record_archived(const maintenance::MaintainerLease& lease, const std::string& name) {
    fence().run(lease, [&](pqxx::work& tx) { tx.exec_params(sql::archived, lease.holder, lease.token, name); });
}

int PostgresRetention::record_archive_failed(const maintenance::MaintainerLease& lease, const std::string& name,
                                             const std::string& error) {
    int failures = 0;
    fence().run(lease, [&](pqxx::work& tx) {
        const auto row = tx.exec_params(sql::archive_failed, lease.holder, lease.token, name, error)[0];
        failures = row[0].is_null() ? 0 : row[0].as<int>();
    });
    return failures;
}

maintenance::DropResult PostgresRetention::drop(const maintenance::MaintainerLease& lease, const std::string& name) {
    maintenance::DropResult result;
    try {
        // Unlimited: deleting the keys of a big partition's events takes as long as it takes
        // (the lock on the log is waited for at most 3 s inside: lock_timeout of retention_drop).
        fence().run_unlimited(lease, [&](pqxx::work& tx) {
            result = {};
            const auto row = tx.exec_params(sql::drop, lease.holder, lease.token, name)[0];
            if (row[0].is_null()) return;
            result.outcome = maintenance::DropOutcome::dropped;
            auto& p = result.partition;
            p.events = row[0].as<std::int64_t>();
            p.keys = row[1].as<std::int64_t>();
            p.bytes = optional_field<std::int64_t>(row[2]);
            p.from_tx = row[3].as<std::string>();
            p.to_tx = row[4].as<std::string>();
            p.lock_wait_ms = row[5].as<double>();
            p.lock_held_ms = row[6].as<double>();
            if (!row[7].is_null())
                p.unconsumed = nlohmann::json::parse(row[7].c_str()).get<std::map<std::string, std::int64_t>>();
        });
    } catch (const pqxx::sql_error& e) {
        if (e.sqlstate() != kLockNotAvailable) throw;
        return {maintenance::DropOutcome::lock_busy, {}};
    }
    return result;
}

bool PostgresRetention::set_policy(const RetentionPolicy& policy) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        // NULL parameters: libpqxx 6.4 takes a null const char*, not std::optional.
        const std::string keep = policy.keep_ms ? std::to_string(*policy.keep_ms) + " milliseconds" : "";
        const std::string max_bytes = policy.max_bytes ? std::to_string(*policy.max_bytes) : "";
        return tx
            .exec_params(sql::set_policy, policy.pattern, policy.keep_ms ? keep.c_str() : nullptr,
                         policy.max_bytes ? max_bytes.c_str() : nullptr, policy.drop_unconsumed, policy.archive)[0][0]
            .as<bool>();
    });
}

bool PostgresRetention::remove_policy(const std::string& pattern) {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        return tx.exec_params(sql::remove_policy, pattern)[0][0].as<bool>();
    });
}

std::vector<RetentionPolicy> PostgresRetention::policies() {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        std::vector<RetentionPolicy> out;
        for (const auto& row : tx.exec(sql::policies))
            out.push_back({row[0].as<std::string>(), optional_field<std::int64_t>(row[1]),
                           optional_field<std::int64_t>(row[2]), row[3].as<bool>(), row[4].as<bool>()});
        return out;
    });
}

std::vector<RetentionHolder> PostgresRetention::holders() {
    return api_call(session_, [&](pqxx::nontransaction& tx) {
        std::vector<RetentionHolder> out;
        for (const auto& row : tx.exec(sql::held_groups)) out.push_back({row[0].as<std::string>(), json_names(row[1])});
        return out;
    });
}

}  // namespace tributary::postgres
