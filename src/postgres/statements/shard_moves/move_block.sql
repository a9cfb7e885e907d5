-- Step 3, first, in the move's transaction: the lane's shard group's writes
-- blocked, and the two-phase commits left on its worker settled ($1 lane).
SELECT tributary.shard_move_block($1)
