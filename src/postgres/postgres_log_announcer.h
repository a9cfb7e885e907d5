#pragma once

#include "maintenance/log_announcer.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// LogAnnouncer on tributary.herald_announce: one autocommitted statement per beat, whose
/// transaction sends the NOTIFY when it announces.
class PostgresLogAnnouncer : public maintenance::LogAnnouncer {
public:
    explicit PostgresLogAnnouncer(PostgresSession& session);

    maintenance::Announcement announce(const maintenance::MaintainerLease& lease,
                                       std::optional<std::uint64_t> since) override;

private:
    PostgresSession& session_;
};

}  // namespace tributary::postgres
