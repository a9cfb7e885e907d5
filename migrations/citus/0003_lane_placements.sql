-- Where each lane's shard is, as tributary last saw it (issue 29;
-- docs/citus.md "Moving a shard"). A lane's positions are transaction ids
-- of the worker that holds its shard; a shard moved to another worker
-- brings its rows with the old worker's ids and then gets the new worker's.
-- So a lane is read only where it was recorded: node_group is the worker
-- group that held its shard when tributary last checked it (migrate, then
-- `tributary shard move` or `shard adopt`); a read that finds the shard on
-- another worker reads nothing (lane_watermark). moving_since and moving_to
-- mark a move that `tributary shard move` has begun: the lane is not read
-- until it ends.
--
-- One DO block, as 0001 says why.
DO $$
BEGIN
    ALTER TABLE tributary.citus_lanes
        ADD COLUMN node_group int,
        ADD COLUMN moving_since timestamptz,
        ADD COLUMN moving_to int;
    UPDATE tributary.citus_lanes l SET node_group = p.groupid
      FROM pg_catalog.pg_dist_placement p WHERE p.shardid = l.shard_id;
END $$;
