-- Whether the log is spread over a Citus cluster (docs/citus.md): the few
-- things that differ there ask this.
--
-- Internal (sql/internal/): steps of the public functions and the loader's
-- own functions. Nothing outside tributary should call them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- True once migrations/citus/0001 distributed the log. Plain PostgreSQL has
-- no Citus catalogue (the query below is planned only when it exists).
-- Called by: attach_new_partition, the files of sql/citus, the loader
-- (src/postgres/postgres_source_turn.cpp).
CREATE OR REPLACE FUNCTION tributary.log_is_distributed() RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid = 'tributary.events'::regclass);
END $$;

-- On Citus, every event carries the transaction id of the worker that holds
-- it, the one its consumers read by (docs/citus.md). A statement run on the
-- coordinator (publish, a receiver's group commit) has its defaults filled
-- there, with the coordinator's id, which also chose the partition the row
-- was sent to. This trigger (events_stamp_worker_tx, migrations/citus/0001)
-- runs on the worker, in the leaf shard the row reached: it writes the row
-- again with the worker's own id, through the shard of the whole log (so
-- that it lands in the partition of that id), and drops the original.
-- Its WHEN clause lets the rows through that have the worker's id already:
-- the loader's, whose calls run on the worker, and its own second write.
-- The worker's id is what makes a two-phase commit safe for readers too:
-- the prepared transaction holds the worker's snapshots back until COMMIT
-- PREPARED, whatever the coordinator has done meanwhile.
-- A row dropped here is not counted by the statement that wrote it: the
-- writers count what they stored otherwise (api/80_publish.sql).
-- Called by: the trigger events_stamp_worker_tx (Citus only).
CREATE OR REPLACE FUNCTION tributary.stamp_worker_tx() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_log_shard regclass;
BEGIN
    SELECT i.inhparent INTO v_log_shard FROM pg_catalog.pg_inherits i WHERE i.inhrelid = TG_RELID;
    NEW.tx_id := pg_current_xact_id();
    EXECUTE format('INSERT INTO %s SELECT ($1).*', v_log_shard) USING NEW;
    RETURN NULL;
END $$;

-- Whether a group's lanes are the log's shards (migrations/citus/0002): a
-- catalogue lookup, cheap enough for lane_of to ask per row.
-- Called by: lane_of, and the lanes' functions that read differently on
-- Citus (32_lanes.sql, 31_fresh_reads.sql, 40_group_backlog.sql, api/30_groups.sql).
CREATE OR REPLACE FUNCTION tributary.lanes_by_shard() RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT to_regclass('tributary.citus_lanes') IS NOT NULL $$;

-- The lane of the shard that holds source p_source (Citus only).
-- Called by: lane_of, lane_sources.
CREATE OR REPLACE FUNCTION tributary.shard_lane(p_source int) RETURNS int
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT l.lane FROM tributary.citus_lanes l
             WHERE l.shard_id = get_shard_id_for_distribution_column('tributary.events', p_source));
END $$;

-- The lane of source p_source's events in a group of p_lanes lanes: on one
-- PostgreSQL source % lanes (the lane index's expression, 32_lanes.sql); on
-- Citus the lane of the shard that holds the source (lanes_by_shard).
-- Called by: the lanes' functions (30_delivery.sql, 32_lanes.sql).
CREATE OR REPLACE FUNCTION tributary.lane_of(p_source int, p_lanes int) RETURNS int
LANGUAGE sql STABLE AS $$
SELECT CASE WHEN tributary.lanes_by_shard() THEN tributary.shard_lane(p_source) ELSE p_source % p_lanes END $$;

-- How many lanes a group has on Citus: the log's shards.
-- Called by: group_create.
CREATE OR REPLACE FUNCTION tributary.shard_lanes() RETURNS int
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT count(*) FROM tributary.citus_lanes);
END $$;

-- A statement whose first column is p_expr evaluated on the worker that
-- holds source p_anchor's shard (Citus only): an equality on the
-- distribution column makes Citus send it there whole, a bound no event
-- meets makes it read no row, and the count makes its one row.
-- Called by: lane_watermark, herald_announce_nodes.
CREATE OR REPLACE FUNCTION tributary.on_anchor_worker_sql(p_expr text, p_anchor int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT format('SELECT %s, count(*) FROM tributary.events e WHERE e.source_id = %s AND e.tx_id < ''1''::xid8',
              p_expr, p_anchor) $$;

-- The watermark of lane p_lane's worker (Citus only): the xmin of a
-- snapshot taken there, in a statement Citus sends to the shard's worker
-- whole (by the lane's anchor: on_anchor_worker_sql): every transaction of
-- that worker below it has ended, so a read of the lane that starts after
-- this statement sees all of them. A two-phase
-- commit held between PREPARE and COMMIT PREPARED on that worker keeps it
-- down, whatever the coordinator has done. Taken before the lane's read,
-- never after: a watermark taken later could pass rows that read missed.
-- NULL, and the lane not to be read, while `tributary shard move` moves its
-- shard, or when the worker that answered is not the one the lane's
-- positions are of: its shard was moved outside tributary
-- (17_shard_moves.sql).
-- Called by: lease_fresh, read_log_lanes, lane_watermark_or_raise.
CREATE OR REPLACE FUNCTION tributary.lane_watermark(p_lane int) RETURNS xid8
LANGUAGE plpgsql AS $$
DECLARE
    v_lane record;
    v_watermark xid8;
    v_group int;
BEGIN
    SELECT l.anchor, l.node_group, l.moving_since INTO v_lane FROM tributary.citus_lanes l WHERE l.lane = p_lane;
    IF v_lane.moving_since IS NOT NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE tributary.on_anchor_worker_sql('pg_snapshot_xmin(pg_current_snapshot()), tributary.node_group()',
                                           v_lane.anchor)
       INTO v_watermark, v_group;
    RETURN CASE WHEN v_group = v_lane.node_group THEN v_watermark END;
END $$;

-- The sources of lane p_lane (Citus only) among those set in p_sources
-- (NULL: every source), as bits (a lane's cached matches, 32_lanes.sql).
-- Called by: lease_fresh, lane_rows, group_backlog.
CREATE OR REPLACE FUNCTION tributary.lane_sources(p_lane int, p_sources bit varying) RETURNS bit varying
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT coalesce(string_agg(CASE WHEN m.id IS NULL THEN '0' ELSE '1' END, '' ORDER BY i.id), '')
                   ::bit varying
              FROM generate_series(0, (SELECT coalesce(max(s.id), -1) FROM tributary.sources s)) AS i(id)
              LEFT JOIN (SELECT s.id FROM tributary.sources s
                          WHERE (p_sources IS NULL OR (s.id < length(p_sources) AND get_bit(p_sources, s.id) = 1))
                            AND tributary.shard_lane(s.id) = p_lane) m ON m.id = i.id);
END $$;

-- The ids set in p_bits, in order (NULL for NULL: no set given).
-- Called by: lane_fresh_arrays, lane_batch_events, lane_batch_json, lane_backlog_capped.
CREATE OR REPLACE FUNCTION tributary.bit_ids(p_bits bit varying) RETURNS int[]
LANGUAGE sql IMMUTABLE STRICT AS $$
SELECT coalesce(array_agg(i ORDER BY i), '{}')
  FROM generate_series(0, length(p_bits) - 1) i
 WHERE get_bit(p_bits, i) = 1 $$;

-- The time a position names (p_from, neither 'beginning' nor 'end'), or the
-- error a caller can fix.
-- Called by: log_position, lane_position.
CREATE OR REPLACE FUNCTION tributary.position_time(p_from text) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_from IS NULL THEN
        RAISE data_exception;
    END IF;
    RETURN p_from::timestamptz;
EXCEPTION WHEN data_exception THEN
    RAISE EXCEPTION 'invalid position ''%''', p_from USING ERRCODE = '22023',
        HINT = 'Use ''beginning'', ''end'' or a timestamp such as ''2026-11-22 09:00:00+00''.';
END $$;

-- Where lane p_lane starts for the time p_at (Citus only): before the
-- first event of the lane's shard loaded at or after p_at, and never past
-- the lane's watermark, taken first (a transaction still running there may
-- hold events loaded after p_at below the first visible one). As
-- log_position's time on one PostgreSQL: events of transactions that started
-- before p_at but committed after may come too. Walks the shard's events in
-- (tx_id, seq) order: an operator's command, not a hot path.
-- Called by: lane_position.
CREATE OR REPLACE FUNCTION tributary.lane_time_position(p_lane int, p_at timestamptz) RETURNS xid8
LANGUAGE plpgsql AS $$
DECLARE
    v_watermark xid8 := tributary.lane_watermark_or_raise(p_lane);
    v_ids int[] := tributary.bit_ids(tributary.lane_sources(p_lane, NULL));
    v_first xid8;
BEGIN
    IF cardinality(v_ids) > 0 THEN
        -- The ids written in, so that Citus sends it whole to the shard's worker.
        EXECUTE format('SELECT e.tx_id FROM tributary.events e WHERE e.source_id = ANY (%L::int[])'
                       ' AND e.loaded_at >= $1 ORDER BY e.tx_id, e.seq LIMIT 1', v_ids)
           INTO v_first USING p_at;
    END IF;
    RETURN least(v_first, v_watermark);
END $$;

-- Where lane p_lane of a group starts, or is reset to, from p_from
-- ('beginning', 'end' or a time) and the group's position there
-- (p_group_tx, log_position's): that position on one PostgreSQL. On Citus
-- each lane's own, on its worker: the beginning is 0 on every node, the end
-- the worker's watermark, a time lane_time_position's.
-- Called by: group_create, group_reset.
CREATE OR REPLACE FUNCTION tributary.lane_position(p_lane int, p_from text, p_group_tx xid8) RETURNS xid8
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT tributary.lanes_by_shard() THEN
        RETURN p_group_tx;
    END IF;
    CASE lower(btrim(coalesce(p_from, 'end')))
    WHEN 'end' THEN
        RETURN tributary.lane_watermark_or_raise(p_lane);
    WHEN 'beginning' THEN
        RETURN '0'::xid8;
    ELSE
        RETURN tributary.lane_time_position(p_lane, tributary.position_time(p_from));
    END CASE;
END $$;

-- What a group's own cursor is set from, for p_from. On Citus the lanes
-- hold the positions (lane_position) and the group's cursor, the
-- coordinator's, serves nothing: a time sets it to the end there.
-- Called by: group_create, group_reset.
CREATE OR REPLACE FUNCTION tributary.group_position(p_from text) RETURNS text
LANGUAGE sql STABLE AS $$
SELECT CASE WHEN tributary.lanes_by_shard() AND lower(btrim(coalesce(p_from, 'end'))) NOT IN ('beginning', 'end')
            THEN 'end' ELSE coalesce(p_from, 'end') END $$;
