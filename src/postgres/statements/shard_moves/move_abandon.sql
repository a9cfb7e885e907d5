-- Step 3 failed and the shard stayed where it was: the lane is read there again.
SELECT tributary.shard_move_abandon($1)
