#pragma once

#include <string>
#include <vector>

#include "group_records.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// Reads the log without a group, for `tail`: log_position and read_log of
/// the SQL API, stateless (the reader keeps its position). Errors as
/// PostgresGroupAdmin's.
class PostgresLogReader {
public:
    explicit PostgresLogReader(PostgresSession& session);

    /// Where `from` (beginning, end or a timestamp) is in the log.
    LogPosition position(const std::string& from);
    /// Up to `max` committed events after `after` of sources matching
    /// `pattern`, in (tx_id, seq) order, up to the watermark.
    std::vector<PositionedEvent> read(const std::string& pattern, const LogPosition& after, int max);

private:
    PostgresSession& session_;
};

}  // namespace tributary::postgres
