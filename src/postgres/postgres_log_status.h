#pragma once

#include <vector>

#include "core/log_status.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// The log's status through tributary.log_status() and log_partitions()
/// (sql/internal/83_log_status.sql). Errors: DatabaseUnavailable, or
/// std::runtime_error with the server's message.
class PostgresLogStatus {
public:
    explicit PostgresLogStatus(PostgresSession& session) : session_(session) {}

    LogStatus status();
    std::vector<PartitionStatus> partitions();

private:
    PostgresSession& session_;
};

}  // namespace tributary::postgres
