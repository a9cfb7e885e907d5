#pragma once

#include <string>
#include <vector>

#include "group_records.h"

namespace tributary::postgres {

/// Where a reader without a group (`tail`, the console's live tail) is. On
/// one PostgreSQL one position in the log's (tx_id, seq) order. On Citus the
/// log has no one order (each worker counts its own transactions): one
/// position per lane, lane i at lanes[i], each in its lane's (tx_id, seq)
/// order (sql/api/22_read_log_lanes.sql, docs/citus.md).
struct ReadPosition {
    LogPosition log;                 ///< one PostgreSQL
    std::vector<LogPosition> lanes;  ///< Citus; empty on one PostgreSQL

    bool by_lane() const { return !lanes.empty(); }
};

/// The position as text: "<tx>:<seq>" on one PostgreSQL; on Citus each
/// lane's "<tx>:<seq>" in lane order, separated by commas. The console's
/// live tail sends it as each event's id.
std::string position_text(const ReadPosition& position);

/// position_text's inverse; std::invalid_argument when `text` is not one.
ReadPosition parse_position_text(const std::string& text);

/// The xid8[] and bigint[] literals of a position's lanes, for read_log_lanes.
std::string lane_tx_array(const ReadPosition& position);
std::string lane_seq_array(const ReadPosition& position);

}  // namespace tributary::postgres
