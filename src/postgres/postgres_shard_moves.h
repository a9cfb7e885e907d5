#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "postgres_session.h"

namespace tributary::postgres {

/// A lane of the log on Citus: its shard, the worker its positions are of,
/// and whether it is read ("readable", moving, or moved outside tributary).
struct ShardLane {
    int lane = 0;
    std::int64_t shard_id = 0;
    std::string node, state;
};

/// What step 1 of a move found.
struct ShardMovePlan {
    std::int64_t shard_id = 0;
    std::string from_node, to_node;  ///< "host:port"
    bool already_moved = false;      ///< an interrupted move left the shard at the target
};

/// The counters after the move: the source's next transaction id, and the
/// target's, past it.
struct ShardMoveEnd {
    std::string source_next, target_next;
};

/// What step 3 did: moved (and the counters after), or refused for now
/// (`busy` says why), which the same move may try again: another move or the
/// creation of a co-located table (the maintainer's next partition of the
/// log) under way, a lock a writer's transaction held past the session's
/// lock_timeout, or a prepared transaction holding the shard group that
/// Citus' recovery has not settled yet.
struct PlacementMove {
    bool moved = false;
    std::string busy;
    ShardMoveEnd end;
};

/// Moves a shard of the log between Citus workers so that no lane skips an
/// event (`tributary shard`), through sql/internal/17_shard_moves.sql, whose
/// header gives the steps and why they are safe; the move itself is Citus'
/// citus_move_shard_placement. Each call is a transaction of its own.
class PostgresShardMoves {
public:
    explicit PostgresShardMoves(PostgresSession& session) : session_(session) {}

    std::vector<ShardLane> list();
    ShardMovePlan begin(int lane, const std::string& host, int port);
    /// The source's and the target's next transaction ids after.
    std::pair<std::string, std::string> prepare(int lane);
    /// Step 3 in one transaction: the writes of lane `lane`'s shard group
    /// (shard `shard_id`'s) blocked, Citus' move between two nodes, each
    /// (host, port), with block_writes, and the record of it (shard_move_end).
    PlacementMove move(int lane, std::int64_t shard_id, const std::pair<std::string, int>& from,
                       const std::pair<std::string, int>& to);
    void abandon(int lane);
    /// The record alone, of a move Citus had made before.
    ShardMoveEnd end(int lane);
    /// The lane's worker now, or nothing when it had not moved.
    std::optional<std::string> adopt(int lane);

private:
    PostgresSession& session_;
};

}  // namespace tributary::postgres
