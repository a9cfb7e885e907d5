-- Step 1 of a move: checks it and marks the lane moving ($1 lane, $2 host, $3 port).
SELECT shard_id, from_node, to_node, already_moved FROM tributary.shard_move_begin($1, $2, $3)
