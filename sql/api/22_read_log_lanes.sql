-- Reading a distributed log without a group (Citus, docs/citus.md): lane by
-- lane, as consumer groups read it there.
--
-- Public API (sql/api/): what users and consumers call. Errors a caller can
-- fix carry SQLSTATE 22023 (bad argument: exit code 2 in the CLI).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): a caller
-- needs EXECUTE on them, not the tables behind them (sql/privileges/).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.
--
-- Why lanes: on Citus every event carries the transaction id of its worker,
-- and each worker counts its own, so the log has no one (tx_id, seq) order
-- and read_log's single position means nothing there. A lane (a shard of the
-- log, tributary.citus_lanes) lives on one worker: its events have one
-- (tx_id, seq) order, read after that worker's watermark. A reader's position
-- is then one (tx_id, seq) per lane: p_after_tx[i + 1], p_after_seq[i + 1]
-- for lane i. Within a source the order is kept (a source is in one lane);
-- across sources none is promised.

-- A position per lane that 'beginning', 'end' or a time names, lane by lane
-- in order (lane_position, as a group's lanes start): 'beginning' is (0, 0)
-- everywhere; 'end' each lane's watermark on its worker (lane_watermark), so
-- every event committed from now on comes after it; a time the first event
-- of the lane's shard loaded at or after it, never past that watermark.
-- On one PostgreSQL: no row (the log is one order: log_position, read_log).
-- Called by: `tributary tail`, the console's live tail.
CREATE OR REPLACE FUNCTION tributary.log_lane_positions(p_from text)
RETURNS TABLE (lane int, tx_id xid8, seq bigint)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    v_from text := lower(btrim(coalesce(p_from, '')));
    v_lane int;
BEGIN
    IF NOT tributary.lanes_by_shard() THEN
        RETURN;
    END IF;
    IF v_from NOT IN ('beginning', 'end') THEN
        PERFORM tributary.position_time(p_from);    -- a bad one refused before any lane is walked
    END IF;
    FOR v_lane IN SELECT l.lane FROM tributary.citus_lanes l ORDER BY l.lane LOOP
        lane := v_lane;
        tx_id := tributary.lane_position(v_lane, p_from, '0'::xid8);
        seq := 0;
        RETURN NEXT;
    END LOOP;
END $$;

-- Up to p_max events after the position (p_after_tx, p_after_seq), one
-- element per lane (log_lane_positions gives the first), from sources
-- matching p_pattern, lane by lane in lane order: each lane's events in its
-- (tx_id, seq) order, then, when the lane was read up to its watermark, a row
-- without an event (source NULL) whose tx_id is that watermark. A reader
-- moves lane's position to each row's (tx_id, seq): past the events it got,
-- and past what the lane has below its watermark (so the next read does not
-- scan again the events of sources it does not want).
-- Never an event that a later read could find below a position already
-- passed: each lane's watermark is taken on its worker before its read (every
-- transaction of that worker below it had ended, so the read sees all of
-- them), and the sources are listed after the watermarks (a source's row is
-- committed before its first event, so every source with an event below a
-- watermark is in the list).
-- Called by: `tributary tail`, the console's live tail (on Citus).
CREATE OR REPLACE FUNCTION tributary.read_log_lanes(p_pattern text, p_after_tx xid8[], p_after_seq bigint[],
                                                    p_max int DEFAULT 1000)
RETURNS TABLE (lane int, tx_id xid8, seq bigint, source text, event_id bigint, payload jsonb,
               loaded_at timestamptz, event_key text)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    v_lanes int := 0;
    v_read int[] := '{}';          -- the lanes read, in order
    v_marks xid8[] := '{}';        -- their watermarks
    v_moving int[];                -- the lanes being moved, read after the watermarks
    v_sources int[];               -- the matching sources (NULL: every source)
    v_ids int[];
    v_lane_of int[];
    v_names text[];
    v_lane_ids int[];
    v_after_tx xid8;
    v_after_seq bigint;
    v_lane int;
    v_count int := 0;
    v_got int;
BEGIN
    PERFORM tributary.check_pattern(p_pattern);
    IF p_max IS NULL OR p_max NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'invalid batch size %: use 1 to 100000', p_max USING ERRCODE = '22023';
    END IF;
    IF NOT tributary.lanes_by_shard() THEN
        RAISE EXCEPTION 'the log is not distributed: read it with read_log' USING ERRCODE = '22023',
            HINT = 'log_position gives read_log''s first position.';
    END IF;
    v_lanes := (SELECT count(*) FROM tributary.citus_lanes);
    IF coalesce(cardinality(p_after_tx), -1) <> v_lanes OR coalesce(cardinality(p_after_seq), -1) <> v_lanes
       OR array_position(p_after_tx, NULL) IS NOT NULL OR array_position(p_after_seq, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'invalid position: the log has % lanes, one (tx_id, seq) each', v_lanes
            USING ERRCODE = '22023', HINT = 'log_lane_positions gives the first position.';
    END IF;
    IF p_pattern <> '>' THEN
        v_sources := tributary.matching_sources(p_pattern);
    END IF;
    -- The watermarks of the lanes that hold a matching source, first.
    FOR v_lane IN SELECT DISTINCT tributary.shard_lane(s.id) FROM tributary.sources s
                   WHERE v_sources IS NULL OR s.id = ANY (v_sources) ORDER BY 1 LOOP
        v_read := v_read || v_lane;
        v_marks := v_marks || tributary.lane_watermark(v_lane);
    END LOOP;
    -- A lane whose shard is moving (a mark committed after its watermark was
    -- taken too: read after them) or moved outside tributary (no watermark)
    -- is not read, and gets no row: its reader keeps its position
    -- (17_shard_moves.sql).
    v_moving := ARRAY(SELECT l.lane FROM tributary.citus_lanes l WHERE l.moving_since IS NOT NULL);
    -- Then the sources (see above), once.
    IF p_pattern <> '>' THEN
        v_sources := tributary.matching_sources(p_pattern);
    END IF;
    SELECT array_agg(s.id ORDER BY s.id), array_agg(tributary.shard_lane(s.id) ORDER BY s.id),
           array_agg(s.name ORDER BY s.id)
      INTO v_ids, v_lane_of, v_names
      FROM tributary.sources s WHERE v_sources IS NULL OR s.id = ANY (v_sources);
    FOR i IN 1 .. cardinality(v_read) LOOP
        EXIT WHEN v_count >= p_max;
        CONTINUE WHEN v_marks[i] IS NULL OR v_read[i] = ANY (v_moving);
        v_lane_ids := ARRAY(SELECT u.id FROM unnest(v_ids, v_lane_of) u(id, lane) WHERE u.lane = v_read[i]
                             ORDER BY u.id);
        CONTINUE WHEN cardinality(v_lane_ids) = 0;
        v_after_tx := p_after_tx[v_read[i] + 1];
        v_after_seq := p_after_seq[v_read[i] + 1];
        -- One statement that Citus sends whole to the lane's worker: the
        -- lane's ids written in (lane_range_sql_by_shard), names added here.
        RETURN QUERY EXECUTE
            'SELECT $1, f.tx_id, f.seq, ($8::text[])[f.source_id_at], f.event_id, f.payload, f.loaded_at, f.event_key'
            ' FROM (SELECT e.tx_id, e.seq, array_position($9::int[], e.source_id) AS source_id_at, e.event_id,'
            '              e.payload, e.loaded_at, coalesce(e.event_key, e.event_id::text) AS event_key'
            || tributary.lane_range_sql_by_shard(v_lane_ids) || ') f ORDER BY f.tx_id, f.seq'
          USING v_read[i], v_after_tx, v_after_seq, v_marks[i], NULL::bit varying, p_max - v_count, NULL::bigint,
                v_names, v_ids;
        GET DIAGNOSTICS v_got = ROW_COUNT;
        v_count := v_count + v_got;
        IF v_count < p_max AND v_marks[i] > v_after_tx THEN
            lane := v_read[i];
            tx_id := v_marks[i];
            seq := 0;
            source := NULL;
            event_id := NULL;
            payload := NULL;
            loaded_at := NULL;
            event_key := NULL;
            RETURN NEXT;
        END IF;
    END LOOP;
END $$;
