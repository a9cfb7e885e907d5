-- Moves the oldest run of the default partition's events (at most $1, all
-- below $2, the horizon the command started at) into a partition of their
-- own (sql/internal/86_default_partition.sql); no row when none is left.
SELECT name, from_tx::text, to_tx::text, events, lock_wait_ms, lock_held_ms
  FROM tributary.repartition_default($1, $2::xid8)
