-- On Citus, the lanes not read now: their shard is being moved, or was moved
-- outside tributary (sql/internal/17_shard_moves.sql). No row on one PostgreSQL.
SELECT lane, state FROM tributary.shard_list() WHERE state <> 'readable' ORDER BY lane
