-- Step 2: the target's counter moved past the source's; both counters after.
SELECT source_next::text, target_next::text FROM tributary.shard_move_prepare($1)
