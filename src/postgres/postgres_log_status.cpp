#include "postgres_log_status.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "api_call.h"
#include "json_names.h"
#include "optional_field.h"
#include "postgres/statements.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

namespace sql = statements::log_status;

std::vector<RetentionHold> holds_of(const pqxx::field& field) {
    std::vector<RetentionHold> out;
    if (field.is_null()) return out;
    for (const auto& h : nlohmann::json::parse(field.c_str()))
        out.push_back({h.at("group").get<std::string>(), h.at("partitions").get<std::int64_t>(),
                       h.at("bytes").get<std::int64_t>()});
    return out;
}

LogStatus status_of(const pqxx::row& r) {
    LogStatus s;
    s.partitions = r[0].as<int>();
    s.bytes = r[1].as<std::int64_t>();
    s.key_bytes = r[2].as<std::int64_t>();
    s.default_events = r[3].as<std::int64_t>();
    s.oldest_event_at = optional_field<std::string>(r[4]);
    s.oldest_event_age_seconds = optional_field<double>(r[5]);
    s.ahead_to_tx = optional_field<std::string>(r[6]);
    s.ahead_xids = optional_field<double>(r[7]).value_or(0);
    s.xids_per_second = optional_field<double>(r[8]);
    s.ahead_seconds = optional_field<double>(r[9]);
    s.next_drop_partition = optional_field<std::string>(r[10]);
    s.next_drop_state = optional_field<std::string>(r[11]);
    s.next_drop_at = optional_field<std::string>(r[12]);
    s.next_drop_seconds = optional_field<double>(r[13]);
    s.archive_failing = r[14].as<int>();
    s.archive_failing_partition = optional_field<std::string>(r[15]);
    s.archive_error = optional_field<std::string>(r[16]);
    s.held = holds_of(r[17]);
    s.oldest_xact_pid = optional_field<int>(r[18]);
    s.oldest_xact_user = optional_field<std::string>(r[19]);
    s.oldest_xact_application = optional_field<std::string>(r[20]);
    s.oldest_xact_state = optional_field<std::string>(r[21]);
    s.oldest_xact_age_seconds = optional_field<double>(r[22]);
    s.xmin_lag_xids = optional_field<double>(r[23]).value_or(0);
    s.maintainer_holder = optional_field<std::string>(r[24]);
    s.maintainer_token = optional_field<std::int64_t>(r[25]);
    s.maintainer_expires_in_seconds = optional_field<double>(r[26]);
    s.herald_holder = optional_field<std::string>(r[27]);
    s.herald_token = optional_field<std::int64_t>(r[28]);
    s.herald_expires_in_seconds = optional_field<double>(r[29]);
    return s;
}

PartitionStatus partition_of(const pqxx::row& r) {
    PartitionStatus p;
    p.name = r[0].as<std::string>();
    p.from_tx = optional_field<std::string>(r[1]);
    p.to_tx = optional_field<std::string>(r[2]);
    p.state = r[3].as<std::string>();
    p.bytes = optional_field<std::int64_t>(r[4]).value_or(0);
    p.started_at = optional_field<std::string>(r[5]);
    p.ended_at = optional_field<std::string>(r[6]);
    p.sealed_at = optional_field<std::string>(r[7]);
    p.due_at = optional_field<std::string>(r[8]);
    p.held_by = json_names(r[9]);
    p.archive = r[10].as<bool>();
    p.archived_at = optional_field<std::string>(r[11]);
    p.archive_failures = optional_field<int>(r[12]).value_or(0);
    p.archive_error = optional_field<std::string>(r[13]);
    return p;
}

/// A worker's figures (on Citus) where they are older or greater than those so far.
void take_worker_transactions(LogStatus& s, const pqxx::row& r) {
    const auto age = optional_field<double>(r[5]);
    if (age && (!s.oldest_xact_age_seconds || *age > *s.oldest_xact_age_seconds)) {
        s.oldest_xact_node = r[0].as<std::string>();
        s.oldest_xact_pid = optional_field<int>(r[1]);
        s.oldest_xact_user = optional_field<std::string>(r[2]);
        s.oldest_xact_application = optional_field<std::string>(r[3]);
        s.oldest_xact_state = optional_field<std::string>(r[4]);
        s.oldest_xact_age_seconds = age;
    }
    const auto prepared_age = optional_field<double>(r[7]);
    if (prepared_age && (!s.oldest_prepared_age_seconds || *prepared_age > *s.oldest_prepared_age_seconds)) {
        s.oldest_prepared_node = r[0].as<std::string>();
        s.oldest_prepared_gid = optional_field<std::string>(r[6]);
        s.oldest_prepared_age_seconds = prepared_age;
    }
    if (const auto lag = optional_field<double>(r[8])) s.xmin_lag_xids = std::max(s.xmin_lag_xids, *lag);
}

}  // namespace

LogStatus PostgresLogStatus::status() {
    return api_call(session_, [](pqxx::nontransaction& tx) {
        auto status = status_of(tx.exec1(sql::status));
        for (const auto& row : tx.exec(sql::unread_lanes))
            status.unread_lanes.push_back("lane " + row[0].as<std::string>() + ": " + row[1].as<std::string>());
        for (const auto& row : tx.exec(sql::worker_transactions)) take_worker_transactions(status, row);
        return status;
    });
}

std::vector<PartitionStatus> PostgresLogStatus::partitions() {
    return api_call(session_, [](pqxx::nontransaction& tx) {
        std::vector<PartitionStatus> out;
        for (const auto& row : tx.exec(sql::partitions)) out.push_back(partition_of(row));
        return out;
    });
}

}  // namespace tributary::postgres
