-- Each lane of the log on Citus, its shard, its worker and whether it is
-- read (sql/internal/17_shard_moves.sql); no row on one PostgreSQL.
SELECT lane, shard_id, coalesce(node, ''), state FROM tributary.shard_list()
