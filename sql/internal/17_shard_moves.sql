-- Moving a shard of the log to another worker (Citus only; docs/citus.md
-- "Moving a shard"), and the guard that keeps a lane from being read where
-- its positions mean nothing.
--
-- A lane's positions (groups' cursors, tail's positions) are transaction
-- ids of the worker that holds its shard. A shard moved from worker A to
-- worker B brings its rows with A's ids, and then gets B's. If B's ids were
-- lower than the positions A's reads reached, B's first events would fall
-- behind them and be skipped for good. `tributary shard move` makes B's ids
-- higher first:
--   1. shard_move_begin marks the lane moving (committed): from then on the
--      lane is not read (lane_watermark answers NULL, and a read that took
--      its watermark before the mark finds the mark afterwards and keeps
--      nothing: lane_moving). Every position of the lane is now below A's
--      counter as it was when the mark committed;
--   2. shard_move_prepare moves B's counter past A's, by empty transactions
--      on B, so that step 3's, under the block, is short;
--   3. one transaction moves the shard group and records it:
--      shard_move_block blocks the group's writes (Citus' own lock, see
--      there) and settles what two-phase commits left on A;
--      citus_move_shard_placement copies the group to B (block_writes: the
--      lock is taken again, held to the end); shard_move_end moves B's
--      counter past A's again, records B as the lane's worker and lets it
--      be read. The group's writes go on, on B, when it commits.
-- Nothing a group or tail reads is skipped, and each source's order holds:
-- every row that came was written on A before the block, below A's
-- counter then, and B's counter is past it before B's first write.
--
-- Why the two-phase commits. A statement that wrote to both workers commits
-- in two phases; cut after its PREPARE on A, its coordinator's commit
-- stands and Citus' recovery commits A's part later (every
-- citus.recover_2pc_interval), into A's placement of the shard. Citus' copy
-- does not see a prepared transaction's rows, and after the move A's
-- placement is an orphan that Citus drops: those rows, acknowledged long
-- before, would be lost (the crash suite lost two pushed events so). So the
-- move settles them first, under the block, and refuses for now what it
-- cannot settle.
--
-- A shard moved by other means (citus_rebalance_start, or by hand) is
-- found by the next read: its worker is not the lane's recorded one, and
-- the lane is not read until `tributary shard adopt` records it.
--
-- Internal (sql/internal/): the guard is called by the lanes' reads; the
-- move's steps by `tributary shard`, as the installation's owner (Citus'
-- move needs it). Re-applied as a whole by `migrate` whenever any file
-- under sql/ changes: everything here is CREATE OR REPLACE.

-- The Citus group of the node this runs on (0 on the coordinator). Called
-- inside a statement Citus sends whole to a worker, it is that worker's.
-- Called by: lane_watermark.
CREATE OR REPLACE FUNCTION tributary.node_group() RETURNS int
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT g.groupid FROM pg_catalog.pg_dist_local_group g);
END $$;

-- Whether lane p_lane is being moved now, read with a snapshot of its own
-- (a read that took its watermark before the mark committed asks after
-- its read, and keeps nothing if so: see the header).
-- Called by: lease_fresh (read_log_lanes reads every lane's mark at once).
CREATE OR REPLACE FUNCTION tributary.lane_moving(p_lane int) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN coalesce((SELECT l.moving_since IS NOT NULL FROM tributary.citus_lanes l WHERE l.lane = p_lane), false);
END $$;

-- Lane p_lane's watermark, or an error that says why it has none (moving,
-- or moved outside tributary): for the commands that set a position from
-- it, which must not guess one.
-- Called by: lane_position, lane_time_position.
CREATE OR REPLACE FUNCTION tributary.lane_watermark_or_raise(p_lane int) RETURNS xid8
LANGUAGE plpgsql AS $$
DECLARE
    v_watermark xid8 := tributary.lane_watermark(p_lane);
BEGIN
    IF v_watermark IS NULL THEN
        RAISE EXCEPTION 'lane % is not readable now: its shard is being moved, or was moved outside tributary', p_lane
            USING ERRCODE = '55000', HINT = '`tributary shard list` says which; try again after the move.';
    END IF;
    RETURN v_watermark;
END $$;

-- The worker group that holds lane p_lane's shard, by Citus' metadata.
-- Called by: shard_move_begin, shard_move_block, shard_move_end, shard_adopt, shard_list.
CREATE OR REPLACE FUNCTION tributary.lane_shard_group(p_lane int) RETURNS int
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT p.groupid FROM pg_dist_placement p JOIN tributary.citus_lanes l ON l.shard_id = p.shardid
             WHERE l.lane = p_lane ORDER BY p.placementid LIMIT 1);
END $$;

-- A worker group's node as 'host:port' (NULL for none).
-- Called by: shard_move_begin, shard_move_block, shard_list.
CREATE OR REPLACE FUNCTION tributary.group_node(p_group int) RETURNS text
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT n.nodename || ':' || n.nodeport FROM pg_dist_node n
             WHERE n.groupid = p_group AND n.noderole = 'primary' ORDER BY n.nodeid LIMIT 1);
END $$;

-- What p_query answers on worker group p_group, run there (a connection of
-- run_command_on_workers' own, which runs it on every worker): p_query
-- answers 'GROUPID ANSWER', and the ANSWER of p_group's worker is returned.
-- Raises when that worker does not answer, naming p_what.
-- Called by: group_next_xid, group_prepared_holders.
CREATE OR REPLACE FUNCTION tributary.group_answer(p_group int, p_query text, p_what text) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_answer text;
    v_failed text;
BEGIN
    SELECT max(w.result) FILTER (WHERE w.success AND split_part(w.result, ' ', 1) = p_group::text),
           string_agg(w.nodename || ':' || w.nodeport || ': ' || w.result, '; ') FILTER (WHERE NOT w.success)
      INTO v_answer, v_failed
      FROM run_command_on_workers(p_query) w;
    IF v_answer IS NULL THEN
        RAISE EXCEPTION '% of worker group % could not be read: %', p_what, p_group,
            coalesce(v_failed, 'no such worker') USING ERRCODE = '58000';
    END IF;
    RETURN substr(v_answer, length(p_group::text) + 2);
END $$;

-- The next transaction id of worker group p_group, read there. Raises when
-- it does not answer.
-- Called by: shard_move_prepare, shard_move_end, shard_adopt.
CREATE OR REPLACE FUNCTION tributary.group_next_xid(p_group int) RETURNS xid8
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN tributary.group_answer(p_group, $c$SELECT g.groupid || ' ' || pg_snapshot_xmax(pg_current_snapshot())
                                                FROM pg_catalog.pg_dist_local_group g$c$,
                                  'the transaction counter')::xid8;
END $$;

-- Moves worker group p_group's counter on to p_to, if it is below: empty
-- transactions there (advance_counters), 200 000 ids at a time.
-- Returns its next id after.
-- Called by: shard_move_prepare, shard_move_end, shard_adopt.
CREATE OR REPLACE FUNCTION tributary.advance_group_counter(p_group int, p_to xid8) RETURNS xid8
LANGUAGE plpgsql AS $$
DECLARE
    v_next xid8 := tributary.group_next_xid(p_group);
BEGIN
    WHILE v_next < p_to LOOP
        PERFORM tributary.advance_counters(p_to, 200000, p_group);
        v_next := tributary.group_next_xid(p_group);
    END LOOP;
    RETURN v_next;
END $$;

-- Step 1 of `tributary shard move`: checks the move of lane p_lane's shard
-- to node p_to_host:p_to_port and marks the lane moving (the caller
-- commits before step 2). Run again after an interrupted move, it goes on
-- with it: already_moved says the shard is at the target (skip step 3).
-- Called by: `tributary shard move`.
CREATE OR REPLACE FUNCTION tributary.shard_move_begin(p_lane int, p_to_host text, p_to_port int,
                                                      OUT shard_id bigint, OUT from_node text, OUT to_node text,
                                                      OUT already_moved boolean)
LANGUAGE plpgsql AS $$
DECLARE
    v_lane record;
    v_at int;
    v_to int;
BEGIN
    IF NOT tributary.lanes_by_shard() THEN
        RAISE EXCEPTION 'the log is not distributed: there is no shard to move' USING ERRCODE = '22023';
    END IF;
    SELECT * INTO v_lane FROM tributary.citus_lanes l WHERE l.lane = p_lane FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no lane %: the log has % (0 to %)', p_lane,
            (SELECT count(*) FROM tributary.citus_lanes), (SELECT count(*) - 1 FROM tributary.citus_lanes)
            USING ERRCODE = '22023';
    END IF;
    SELECT n.groupid INTO v_to FROM pg_dist_node n
     WHERE n.nodename = p_to_host AND n.nodeport = p_to_port AND n.noderole = 'primary' AND n.isactive;
    IF v_to IS NULL OR v_to = 0 THEN
        RAISE EXCEPTION '%:% is not an active worker of this cluster', p_to_host, p_to_port USING ERRCODE = '22023',
            HINT = 'SELECT nodename, nodeport FROM pg_dist_node lists the nodes; '
                   'add a worker with citus_add_node first.';
    END IF;
    v_at := tributary.lane_shard_group(p_lane);
    IF v_lane.moving_since IS NOT NULL AND v_lane.moving_to <> v_to THEN
        RAISE EXCEPTION 'lane % is being moved to %, not to %:%', p_lane, tributary.group_node(v_lane.moving_to),
            p_to_host, p_to_port USING ERRCODE = '55000',
            HINT = 'Finish that move first (run the same `tributary shard move` again).';
    ELSIF v_lane.moving_since IS NULL AND v_at IS DISTINCT FROM v_lane.node_group THEN
        RAISE EXCEPTION 'lane %''s shard was moved outside tributary (to %)', p_lane, tributary.group_node(v_at)
            USING ERRCODE = '55000', HINT = 'Record where it is with `tributary shard adopt` first.';
    ELSIF v_lane.moving_since IS NULL AND v_at = v_to THEN
        RAISE EXCEPTION 'lane %''s shard is on %:% already', p_lane, p_to_host, p_to_port USING ERRCODE = '22023';
    END IF;
    UPDATE tributary.citus_lanes l SET moving_since = coalesce(l.moving_since, clock_timestamp()), moving_to = v_to
     WHERE l.lane = p_lane;
    shard_id := v_lane.shard_id;
    from_node := tributary.group_node(v_lane.node_group);
    to_node := tributary.group_node(v_to);
    already_moved := v_at = v_to;
END $$;

-- Step 2: moves the target's counter past the source's, after the lane was
-- marked moving (so that step 3 has little to move under the block).
-- Returns both counters after.
-- Called by: `tributary shard move`.
DROP FUNCTION IF EXISTS tributary.shard_move_prepare(int, bigint);
CREATE OR REPLACE FUNCTION tributary.shard_move_prepare(p_lane int, OUT source_next xid8, OUT target_next xid8)
LANGUAGE plpgsql AS $$
DECLARE
    v_lane record;
BEGIN
    SELECT * INTO v_lane FROM tributary.citus_lanes l WHERE l.lane = p_lane;
    IF v_lane.moving_since IS NULL THEN
        RAISE EXCEPTION 'lane % is not being moved (shard_move_begin first)', p_lane USING ERRCODE = '55000';
    END IF;
    source_next := tributary.group_next_xid(v_lane.node_group);
    target_next := tributary.advance_group_counter(v_lane.moving_to, source_next);
END $$;

-- Lane p_lane's shard group: the shards of every table co-located with the
-- log (partitions included) that hold the lane's sources, ordered by id, and
-- their qualified names.
-- Called by: shard_move_block.
CREATE OR REPLACE FUNCTION tributary.lane_shards(p_lane int, OUT shard_ids bigint[], OUT shard_names text[])
LANGUAGE plpgsql STABLE AS $$
BEGIN
    SELECT array_agg(s.shardid ORDER BY s.shardid), array_agg(shard_name(s.logicalrelid, s.shardid) ORDER BY s.shardid)
      INTO shard_ids, shard_names
      FROM pg_dist_shard s JOIN pg_dist_partition p ON p.logicalrelid = s.logicalrelid
     WHERE p.colocationid = (SELECT e.colocationid FROM pg_dist_partition e
                              WHERE e.logicalrelid = 'tributary.events'::regclass)
       AND s.shardminvalue = (SELECT d.shardminvalue FROM pg_dist_shard d JOIN tributary.citus_lanes l
                                  ON l.shard_id = d.shardid WHERE l.lane = p_lane);
END $$;

-- The prepared transactions on worker group p_group that hold a lock on one
-- of the tables p_tables (their gids, comma-separated), read there; NULL for
-- none. Raises when it does not answer. A prepared transaction's locks are
-- those with no pid.
-- Called by: shard_move_block.
CREATE OR REPLACE FUNCTION tributary.group_prepared_holders(p_group int, p_tables text[]) RETURNS text
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN nullif(tributary.group_answer(p_group, format(
               $c$SELECT g.groupid || ' ' || coalesce(
                     (SELECT string_agg(DISTINCT x.gid, ', ' ORDER BY x.gid)
                        FROM pg_locks r
                        JOIN pg_locks t ON t.virtualtransaction = r.virtualtransaction
                                       AND t.locktype = 'transactionid' AND t.pid IS NULL
                        JOIN pg_prepared_xacts x ON x.transaction = t.transactionid
                       WHERE r.pid IS NULL AND r.locktype = 'relation'
                         AND r.relation IN (SELECT to_regclass(n) FROM unnest(%L::text[]) n)), '')
                  FROM pg_catalog.pg_dist_local_group g$c$, p_tables), 'the prepared transactions'), '');
END $$;

-- Step 3, first in the transaction that moves the shard group: blocks the
-- group's writes and settles the two-phase commits that hold it on its
-- worker (the header says why). The lock is Citus' own, which its move
-- takes too (ExclusiveLock on the shards' metadata, lock_shard_metadata's
-- mode 7): every write of these shards through a coordinator holds it shared
-- until its transaction ends. Once it is ours, a prepared transaction that
-- holds the group is one whose coordinator's transaction ended: Citus'
-- recovery commits it (the coordinator committed) or rolls it back, here
-- when this role may call it (a superuser; else the maintenance daemon does,
-- every citus.recover_2pc_interval). One that is left (recovery could not
-- settle it, or it is not Citus') fails the move for now (55P03, which
-- `shard move` tries again, as a lock it waited for past lock_timeout).
-- Called by: `tributary shard move`.
CREATE OR REPLACE FUNCTION tributary.shard_move_block(p_lane int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_shards record;
    v_at int := tributary.lane_shard_group(p_lane);
    v_holders text;
BEGIN
    IF NOT coalesce((SELECT l.moving_since IS NOT NULL FROM tributary.citus_lanes l WHERE l.lane = p_lane), false) THEN
        RAISE EXCEPTION 'lane % is not being moved (shard_move_begin first)', p_lane USING ERRCODE = '55000';
    END IF;
    SELECT * INTO v_shards FROM tributary.lane_shards(p_lane);
    PERFORM lock_shard_metadata(7, v_shards.shard_ids);
    IF has_function_privilege('pg_catalog.recover_prepared_transactions()', 'EXECUTE') THEN
        PERFORM recover_prepared_transactions();
    END IF;
    v_holders := tributary.group_prepared_holders(v_at, v_shards.shard_names);
    IF v_holders IS NOT NULL THEN
        RAISE EXCEPTION 'lane %''s shard group is held on % by prepared transaction(s) % that Citus'' recovery has not '
                        'committed or rolled back yet', p_lane, tributary.group_node(v_at), v_holders
            USING ERRCODE = '55P03',
                  HINT = 'The coordinator''s maintenance daemon settles them every citus.recover_2pc_interval; '
                         'a superuser can at once with SELECT recover_prepared_transactions().';
    END IF;
END $$;

-- Step 3's undoing when the move failed and the shard is still where it
-- was: the lane is read there again, as before.
-- Called by: `tributary shard move`.
CREATE OR REPLACE FUNCTION tributary.shard_move_abandon(p_lane int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tributary.citus_lanes l SET moving_since = NULL, moving_to = NULL
     WHERE l.lane = p_lane AND tributary.lane_shard_group(p_lane) = l.node_group;
END $$;

-- Step 3, last: the shard is at the target; its counter is moved past the
-- source's again, the target recorded as the lane's worker, the lane read
-- again. In the move's transaction, under the block. Alone (a move Citus
-- had made before, the lane still marked), the target may have stored
-- events of the shard meanwhile, maybe below the source's last.
-- Called by: `tributary shard move`.
DROP FUNCTION IF EXISTS tributary.shard_move_end(int, xid8);
CREATE OR REPLACE FUNCTION tributary.shard_move_end(p_lane int, OUT source_next xid8, OUT target_next xid8)
LANGUAGE plpgsql AS $$
DECLARE
    v_lane record;
BEGIN
    SELECT * INTO v_lane FROM tributary.citus_lanes l WHERE l.lane = p_lane FOR UPDATE;
    IF v_lane.moving_since IS NULL THEN
        RAISE EXCEPTION 'lane % is not being moved', p_lane USING ERRCODE = '55000';
    ELSIF tributary.lane_shard_group(p_lane) IS DISTINCT FROM v_lane.moving_to THEN
        RAISE EXCEPTION 'lane %''s shard is not on % yet', p_lane, tributary.group_node(v_lane.moving_to)
            USING ERRCODE = '55000';
    END IF;
    source_next := tributary.group_next_xid(v_lane.node_group);
    target_next := tributary.advance_group_counter(v_lane.moving_to, source_next);
    UPDATE tributary.citus_lanes l SET node_group = l.moving_to, moving_since = NULL, moving_to = NULL
     WHERE l.lane = p_lane;
END $$;

-- `tributary shard adopt`: records where lane p_lane's shard is now, after a
-- move made outside tributary, and lets the lane be read there. Its counter
-- is first moved past every worker's, so that nothing it writes from now on
-- falls behind a position. What it wrote between the move and now cannot be
-- told from what came with the shard (docs/citus.md says what to do).
-- Returns the worker, or NULL when the lane was where recorded.
-- Called by: `tributary shard adopt`.
CREATE OR REPLACE FUNCTION tributary.shard_adopt(p_lane int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    v_lane record;
    v_at int := tributary.lane_shard_group(p_lane);
BEGIN
    SELECT * INTO v_lane FROM tributary.citus_lanes l WHERE l.lane = p_lane FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no lane %', p_lane USING ERRCODE = '22023';
    ELSIF v_lane.moving_since IS NOT NULL THEN
        RAISE EXCEPTION 'lane % is being moved by `tributary shard move`', p_lane USING ERRCODE = '55000',
            HINT = 'Run that move again to finish it.';
    ELSIF v_at IS NOT DISTINCT FROM v_lane.node_group THEN
        RETURN NULL;
    END IF;
    PERFORM tributary.advance_group_counter(v_at, tributary.log_next_xid());
    UPDATE tributary.citus_lanes l SET node_group = v_at WHERE l.lane = p_lane;
    RETURN tributary.group_node(v_at);
END $$;

-- `tributary shard list`: each lane, its shard, the worker that holds it and
-- its state: 'readable', 'moving to host:port since ...', or 'moved outside
-- tributary (to host:port): not read until adopted'.
-- Called by: `tributary shard list`, and `status`, `log` and the metrics
-- (the warnings of a lane not read), as any role that reads the log's status.
CREATE OR REPLACE FUNCTION tributary.shard_list()
RETURNS TABLE (lane int, shard_id bigint, node text, state text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT tributary.lanes_by_shard() THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT l.lane, l.shard_id, tributary.group_node(l.node_group),
           CASE WHEN l.moving_since IS NOT NULL
                THEN format('moving to %s since %s', tributary.group_node(l.moving_to),
                            to_char(l.moving_since AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'))
                WHEN p.groupid IS DISTINCT FROM l.node_group
                THEN format('moved outside tributary (to %s): not read until adopted', tributary.group_node(p.groupid))
                ELSE 'readable' END
      FROM tributary.citus_lanes l CROSS JOIN LATERAL (SELECT tributary.lane_shard_group(l.lane) AS groupid) p
     ORDER BY l.lane;
END $$;
