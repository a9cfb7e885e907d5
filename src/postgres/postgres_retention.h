#pragma once

#include <optional>
#include <string>
#include <vector>

#include "maintainer_fence.h"
#include "maintenance/retention_catalog.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// A retention policy as `tributary retention list` shows it.
struct RetentionPolicy {
    std::string pattern;
    std::optional<std::int64_t> keep_ms;
    std::optional<std::int64_t> max_bytes;
    bool drop_unconsumed = false;
    bool archive = false;
};

/// A consumer group that holds retention back, with the partitions it holds.
struct RetentionHolder {
    std::string group;
    std::vector<std::string> partitions;
};

/// Retention through the SQL of sql/internal/82_retention.sql and
/// sql/api/85_retention.sql: the maintainer's RetentionCatalog (every
/// change in a MaintainerFence transaction: its timeouts, and SQLSTATE TR001
/// becomes LeaseLost), and the policies and holders the CLI shows. The
/// archive's COPY runs on a libpq connection of its own (libpqxx 6.4 has no
/// COPY of a query in a chosen format), opened from `conninfo` for that one
/// COPY, with no statement timeout: a big partition streams for longer than
/// any fenced statement may last, and it holds no lock a successor needs
/// (the step renews the lease between chunks: RetentionStep).
class PostgresRetention : public maintenance::RetentionCatalog {
public:
    /// The CLI's: policies and holders only (the catalogue's changes need a fence).
    PostgresRetention(PostgresSession& session, std::string conninfo)
        : session_(session), conninfo_(std::move(conninfo)) {}
    /// The maintainer's.
    PostgresRetention(MaintainerFence& fence, std::string conninfo)
        : session_(fence.session()), fence_(&fence), conninfo_(std::move(conninfo)) {}

    std::vector<maintenance::PartitionRetention> partitions() override;
    void stream_partition(const std::string& name, const std::string& format,
                          const std::function<bool(const char*, std::size_t)>& sink) override;
    void record_archived(const maintenance::MaintainerLease& lease, const std::string& name) override;
    int record_archive_failed(const maintenance::MaintainerLease& lease, const std::string& name,
                              const std::string& error) override;
    maintenance::DropResult drop(const maintenance::MaintainerLease& lease, const std::string& name) override;

    /// True when the policy is new. Throws InvalidRequest for a bad pattern or values.
    bool set_policy(const RetentionPolicy& policy);
    bool remove_policy(const std::string& pattern);
    std::vector<RetentionPolicy> policies();
    std::vector<RetentionHolder> holders();

private:
    MaintainerFence& fence();

    PostgresSession& session_;
    MaintainerFence* fence_ = nullptr;
    std::string conninfo_;
};

}  // namespace tributary::postgres
