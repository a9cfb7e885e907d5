#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "postgres_session.h"

namespace tributary::postgres {

/// One run of the default partition's events moved into a partition of its own.
struct DefaultPartitionMove {
    std::string partition, from_tx, to_tx;
    std::int64_t events = 0;
    double lock_wait_ms = 0, lock_held_ms = 0;
};

/// What the default partition still holds: events, and those at or above
/// the xmin horizon (transactions below their end may still be running).
struct DefaultPartitionLeft {
    std::int64_t events = 0, unsealed = 0;
};

/// Empties the default partition of the log (`tributary log repartition`)
/// through tributary.repartition_default (sql/internal/86_default_partition.sql).
class PostgresDefaultPartition {
public:
    explicit PostgresDefaultPartition(PostgresSession& session) : session_(session) {}

    /// The outcome of one move: a range moved, nothing (left) to move below
    /// the horizon, or the log busy (its lock not had within 3 s, or a
    /// concurrent run moved the range first: nothing changed; try again).
    struct Outcome {
        std::optional<DefaultPartitionMove> moved;
        bool busy = false;
        std::string busy_reason;
    };
    /// The xmin horizon now (a transaction id, as text): bounds a run of moves.
    std::string horizon();
    /// Moves at most `max_events` events (never splitting a transaction's), all below `below`.
    Outcome move_next(int max_events, const std::string& below);
    DefaultPartitionLeft left();

private:
    PostgresSession& session_;
};

}  // namespace tributary::postgres
