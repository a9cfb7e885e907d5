-- Step 4: the target recorded as the lane's worker ($2: step 2's answer).
SELECT source_next::text, target_next::text, interleaved FROM tributary.shard_move_end($1, $2::xid8)
