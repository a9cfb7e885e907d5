#pragma once

#include <string>

#include "core/group_log.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// GroupLog over the SQL API of migrations/0002 and sql/api/
/// (consumer_read, consumer_next, consumer_ack, consumer_fail, consumer_extend, consumer_leave,
/// consumer_awaits_lanes): every call is
/// one autocommit statement on the session's connection. Not thread-safe, as
/// the session.
class PostgresGroupLog : public GroupLog {
public:
    PostgresGroupLog(PostgresSession& session, std::string group);

    std::optional<LeasedBatch> read(const std::string& consumer, int max_events) override;
    NextBatch next(const std::string& consumer, int max_events, const LeasedBatch* previous) override;
    bool ack(const LeasedBatch& batch) override;
    bool fail(const LeasedBatch& batch, const std::string& error) override;
    bool extend(std::int64_t batch_id, const std::string& token) override;
    int leave(const std::string& consumer) override;
    bool awaits_lanes(const std::string& consumer) override;

private:
    PostgresSession& session_;
    std::string group_;
};

/// Error texts (a command's stderr) are stored in the database: printable
/// ASCII, newlines and tabs kept, everything else '?', at most `longest`
/// bytes (the end kept), so that storing one can never fail.
std::string storable_text(const std::string& text, std::size_t longest = 4000);

}  // namespace tributary::postgres

namespace tributary::postgres {

/// A PostgresGroupLog with a database session of its own, for one thread of
/// a consumer (GroupLogOpener); SessionKeeping::shared behind a pooler in
/// transaction mode (`consume --poll-only`).
std::unique_ptr<GroupLog> open_group_log(const std::string& conninfo, const std::string& group,
                                         SessionKeeping keeping = SessionKeeping::kept);

}  // namespace tributary::postgres
