-- Step 3, last, in the move's transaction (or alone, when Citus had moved
-- the shard before): the target recorded as the lane's worker.
SELECT source_next::text, target_next::text FROM tributary.shard_move_end($1)
