#pragma once

#include <string>
#include <vector>

#include "group_records.h"
#include "postgres_session.h"
#include "read_position.h"

namespace tributary::postgres {

/// Reads the log without a group, for `tail`: log_position and read_log of
/// the SQL API, stateless (the reader keeps its position). On Citus
/// log_lane_positions and read_log_lanes: a position per lane. Errors as
/// PostgresGroupAdmin's.
class PostgresLogReader {
public:
    explicit PostgresLogReader(PostgresSession& session);

    /// Where `from` (beginning, end or a timestamp) is in the log: per lane
    /// on Citus.
    ReadPosition position(const std::string& from);
    /// Up to `max` committed events after `position` of sources matching
    /// `pattern`, up to the watermark (on Citus each lane's): in (tx_id, seq)
    /// order on one PostgreSQL, lane by lane on Citus, each lane in its
    /// order. Moves `position` past what it read: the events, and on Citus
    /// every lane read up to its watermark.
    std::vector<PositionedEvent> read(const std::string& pattern, ReadPosition& position, int max);

private:
    std::vector<PositionedEvent> read_one_order(const std::string& pattern, const LogPosition& after, int max);
    std::vector<PositionedEvent> read_lanes(const std::string& pattern, ReadPosition& position, int max);

    PostgresSession& session_;
};

}  // namespace tributary::postgres
