-- Step 3: Citus moves the shard group ($1 shard, $2/$3 from, $4/$5 to), in
-- the move's transaction after move_block; block_writes, which holds the
-- group's writes until that transaction ends.
SELECT citus_move_shard_placement($1, $2, $3, $4, $5, 'block_writes')
