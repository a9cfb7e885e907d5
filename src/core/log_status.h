#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tributary {

/// A consumer group that holds back partitions retention would drop.
struct RetentionHold {
    std::string group;
    std::int64_t partitions = 0;
    std::int64_t bytes = 0;
};

/// The log at a glance, as tributary.log_status() reports it
/// (sql/internal/83_log_status.sql says what each field means). Times are
/// PostgreSQL's text; ages and "in" seconds are as of the call.
struct LogStatus {
    int partitions = 0;
    std::int64_t bytes = 0;
    std::int64_t key_bytes = 0;
    std::int64_t default_events = 0;  ///< counted up to 1000
    std::optional<std::string> oldest_event_at;
    std::optional<double> oldest_event_age_seconds;
    std::optional<std::string> ahead_to_tx;
    double ahead_xids = 0;
    std::optional<double> xids_per_second;
    std::optional<double> ahead_seconds;  ///< none before the rate is measured
    std::optional<std::string> next_drop_partition;
    std::optional<std::string> next_drop_state;  ///< due, archive or waiting
    std::optional<std::string> next_drop_at;
    std::optional<double> next_drop_seconds;
    int archive_failing = 0;
    std::optional<std::string> archive_failing_partition;
    std::optional<std::string> archive_error;
    std::vector<RetentionHold> held;
    /// On Citus, the lanes not read now and why ("lane 5: moving to ..."): a shard being moved, or moved outside
    /// tributary (docs/citus.md "Moving a shard").
    std::vector<std::string> unread_lanes;
    std::optional<int> oldest_xact_pid;  ///< none: no open transaction visible
    std::optional<std::string> oldest_xact_user;
    std::optional<std::string> oldest_xact_application;
    std::optional<std::string> oldest_xact_state;
    std::optional<double> oldest_xact_age_seconds;
    /// On Citus, the node of the oldest open transaction when it is a worker's ("host:port"; none: this server).
    std::optional<std::string> oldest_xact_node;
    /// On Citus, the oldest two-phase commit a worker holds prepared: it holds that worker's lanes back.
    std::optional<std::string> oldest_prepared_gid;
    std::optional<std::string> oldest_prepared_node;
    std::optional<double> oldest_prepared_age_seconds;
    double xmin_lag_xids = 0;  ///< on Citus, the greatest of the coordinator's and the workers'
    std::optional<std::string> maintainer_holder;
    std::optional<std::int64_t> maintainer_token;
    std::optional<double> maintainer_expires_in_seconds;  ///< negative: expired

    /// Someone holds the maintainer's lease, unexpired.
    bool has_maintainer() const { return maintainer_expires_in_seconds && *maintainer_expires_in_seconds > 0; }

    /// The herald's lease, the same way (it wakes consumers: without one they read on their timers).
    std::optional<std::string> herald_holder;
    std::optional<std::int64_t> herald_token;
    std::optional<double> herald_expires_in_seconds;
    bool has_herald() const { return herald_expires_in_seconds && *herald_expires_in_seconds > 0; }
};

/// One partition of the log as `tributary log partitions` shows it.
struct PartitionStatus {
    std::string name;
    std::optional<std::string> from_tx;  ///< none for the default partition
    std::optional<std::string> to_tx;
    std::string state;  ///< partition_retention's, or "default"
    std::int64_t bytes = 0;
    std::optional<std::string> started_at;
    std::optional<std::string> ended_at;
    std::optional<std::string> sealed_at;
    std::optional<std::string> due_at;
    std::vector<std::string> held_by;
    bool archive = false;
    std::optional<std::string> archived_at;
    int archive_failures = 0;
    std::optional<std::string> archive_error;
};

}  // namespace tributary
