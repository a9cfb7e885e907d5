-- Step 3: Citus moves the shard group ($1 shard, $2/$3 from, $4/$5 to, $6
-- citus.shard_transfer_mode). Sent alone, outside a transaction block.
SELECT citus_move_shard_placement($1, $2, $3, $4, $5, $6::citus.shard_transfer_mode)
