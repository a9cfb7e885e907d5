#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tributary::postgres {

/// What `group create` asks for; the defaults are the SQL API's.
struct GroupSpec {
    std::string name;
    std::string pattern = ">";
    std::string from = "end";  ///< beginning, end, or a timestamp
    int max_deliveries = 5;
    std::string lease = "30 seconds";  ///< a PostgreSQL interval
    bool ordered = false;
    int lanes = 1;  ///< 1: one cursor, as always; more: a group of lanes (sql/internal/32_lanes.sql)
};

/// One row of tributary.group_status.
struct GroupStatus {
    std::string name;
    std::string pattern;
    bool ordered = false;
    int max_deliveries = 0;
    std::int64_t lease_ms = 0;
    std::int64_t events_behind = 0;
    std::optional<double> oldest_unprocessed_seconds;
    int batches_in_flight = 0;
    int retries_waiting = 0;
    int dead_letters = 0;
    int lanes = 1;
    int unheld_lanes = 0;  ///< lanes no consumer holds now (their events wait)
};

/// One row of tributary.group_lanes_status: a lane of a group of lanes.
struct LaneStatus {
    int lane = 0;
    std::optional<std::string> holder;  ///< nobody when empty
    std::int64_t events_behind = 0;
    std::optional<double> oldest_unprocessed_seconds;
    int batches_in_flight = 0;
    int retries_waiting = 0;
};

/// One row of tributary.dead_letters.
struct DeadLetter {
    std::int64_t seq = 0;
    std::string source;
    std::optional<std::int64_t> event_id;  ///< as LoggedEvent's
    std::string event_key;                 ///< as LoggedEvent's
    std::string payload;                   ///< JSON text as PostgreSQL returns it
    int deliveries = 0;
    std::string last_error;
    std::string failed_at;
};

/// A position in the log, in (tx_id, seq) order: everything at or before it
/// is behind the reader.
struct LogPosition {
    std::string tx_id;  ///< xid8 as text
    std::int64_t seq = 0;
};

/// One event as read_log returns it, with its position.
struct PositionedEvent {
    LogPosition position;
    std::string source;
    std::optional<std::int64_t> event_id;  ///< as LoggedEvent's
    std::string event_key;                 ///< as LoggedEvent's
    std::string payload;
    std::string loaded_at;
    int lane = -1;  ///< on Citus the lane it was read in (read_position.h); -1 on one PostgreSQL
};

}  // namespace tributary::postgres
