-- Moves the oldest run of the default partition's events (at most $1) into
-- a partition of their own (sql/internal/86_default_partition.sql); no row
-- when none lies below the xmin horizon.
SELECT name, from_tx::text, to_tx::text, events, lock_wait_ms, lock_held_ms
  FROM tributary.repartition_default($1)
