#pragma once

#include "maintenance/log_announcer.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// LogAnnouncer on tributary.herald_announce_nodes: one autocommitted statement per beat, whose
/// transaction sends the NOTIFY when it announces (on Citus it asks each worker in turn).
class PostgresLogAnnouncer : public maintenance::LogAnnouncer {
public:
    explicit PostgresLogAnnouncer(PostgresSession& session);

    maintenance::Announcement announce(const maintenance::MaintainerLease& lease,
                                       const std::vector<std::uint64_t>& since) override;

    /// Whether the log is distributed over Citus (the herald beats less often there).
    bool log_is_distributed();

private:
    PostgresSession& session_;
};

}  // namespace tributary::postgres
