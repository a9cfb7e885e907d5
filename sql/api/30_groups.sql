-- Creating, moving and deleting consumer groups (admins).
--
-- Public API (sql/api/): what users and consumers call. Errors a caller can
-- fix carry SQLSTATE 22023 (bad argument: exit code 2 in the CLI) or P0002
-- (no such group). Call these in autocommit or READ COMMITTED transactions: a
-- consumer_read must see what other consumers committed a moment ago, and
-- its watermark is only as fresh as its statement's snapshot.
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): a caller
-- needs EXECUTE on them, not the tables behind them (sql/privileges/).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- group_create gained p_lanes (migration 0017): the older one goes, or a
-- call without it would match both (privileges/ grants again).
DROP FUNCTION IF EXISTS tributary.group_create(text, text, text, int, interval, boolean);

-- NULL for an optional argument means its default, so a client can pass
-- every argument whether the user gave it or not.
-- p_lanes: 1 (the default) a group as it always was; 2 to 256 a group of
-- lanes (internal/32_lanes.sql), which needs the lane index of that count:
-- created here when it is the first group of that many lanes, reading the
-- whole log while writers wait (docs/operations.md).
-- Called by: admins; `tributary group create`.
CREATE OR REPLACE FUNCTION tributary.group_create(
    p_name text, p_pattern text DEFAULT '>', p_from text DEFAULT 'end',
    p_max_deliveries int DEFAULT 5, p_lease interval DEFAULT '30 seconds',
    p_ordered boolean DEFAULT false, p_lanes int DEFAULT 1) RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_pattern text := coalesce(p_pattern, '>');
    v_id int;
    v_lanes int := coalesce(p_lanes, 1);
BEGIN
    IF p_name IS NULL OR p_name !~ '^[A-Za-z0-9._-]{1,100}$' THEN
        RAISE EXCEPTION 'invalid group name ''%''', p_name USING ERRCODE = '22023',
            HINT = 'Use 1 to 100 letters, digits, ''.'', ''_'' or ''-''.';
    END IF;
    PERFORM tributary.check_pattern(v_pattern);
    IF coalesce(p_max_deliveries, 5) < 1 THEN
        RAISE EXCEPTION 'invalid max deliveries %: it must be at least 1', p_max_deliveries USING ERRCODE = '22023';
    END IF;
    IF coalesce(p_lease, '30 seconds') <= interval '0' THEN
        RAISE EXCEPTION 'invalid lease %: it must be positive, e.g. ''30 seconds''', p_lease USING ERRCODE = '22023';
    END IF;
    IF v_lanes NOT BETWEEN 1 AND 256 THEN
        RAISE EXCEPTION 'invalid lanes %: use 1 to 256', p_lanes USING ERRCODE = '22023',
            HINT = 'A lane is a share of the sources read by one consumer at a time: as many as the consumers you will run, or a few more.';
    END IF;
    -- On Citus every group has one lane per shard of the log, each read on
    -- its shard's worker, from its own position there (docs/citus.md).
    IF tributary.lanes_by_shard() THEN
        -- A group of one lane reads by the group's own cursor, which on Citus
        -- would be the coordinator's ids.
        IF tributary.shard_lanes() < 2 THEN
            RAISE EXCEPTION 'the log is distributed over one shard: a group needs two lanes or more on Citus'
                USING ERRCODE = '22023',
                HINT = 'Distribute the log over more shards (citus.shard_count, read when migrate distributes it).';
        END IF;
        IF v_lanes NOT IN (1, tributary.shard_lanes()) THEN
            RAISE EXCEPTION 'invalid lanes %: on Citus a group has one lane per shard of the log (%)', p_lanes,
                            tributary.shard_lanes() USING ERRCODE = '22023',
                HINT = 'Leave --lanes out.';
        END IF;
        v_lanes := tributary.shard_lanes();
    END IF;
    -- After any change of the sources in progress, and before any to come
    -- (60_source_triggers.sql, forget_group_sources): else this group could
    -- keep matches without a source added meanwhile, and never read it.
    PERFORM pg_advisory_xact_lock(tributary.group_sources_lock_key());
    INSERT INTO tributary.consumer_groups (name, pattern, max_deliveries, lease, ordered, cursor_tx, cursor_seq, lanes)
    SELECT p_name, v_pattern, coalesce(p_max_deliveries, 5), coalesce(p_lease, '30 seconds'),
           coalesce(p_ordered, false), pos.tx_id, pos.seq, v_lanes
      FROM tributary.log_position(tributary.group_position(p_from)) pos
    ON CONFLICT (name) DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        RAISE EXCEPTION 'consumer group ''%'' already exists', p_name USING ERRCODE = '23505',
            HINT = 'Pick another name, move it with group_reset, or delete it first with group_delete.';
    END IF;
    IF v_lanes > 1 THEN
        -- Every lane starts where the group does: on Citus at its own
        -- worker's end (the group's cursor is the coordinator's).
        INSERT INTO tributary.group_lanes (group_id, lane, cursor_tx, cursor_seq)
        SELECT g.id, n, tributary.lane_position(n, p_from, g.cursor_tx), g.cursor_seq
          FROM tributary.consumer_groups g, generate_series(0, v_lanes - 1) n
         WHERE g.id = v_id;
        PERFORM tributary.ensure_lane_index(v_lanes);
    END IF;
    RETURN v_id;
END $$;

-- Moves the cursor; batches in flight and waiting retries are dropped (their
-- late acks return false). Dead letters stay.
-- Called by: admins; `tributary group reset`.
CREATE OR REPLACE FUNCTION tributary.group_reset(p_name text, p_to text) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_name);
BEGIN
    IF p_to IS NULL THEN
        RAISE EXCEPTION 'say where to move the group: ''beginning'', ''end'' or a timestamp' USING ERRCODE = '22023';
    END IF;
    -- The group row first, as a fresh read does, so the two queue rather than deadlock.
    PERFORM 1 FROM tributary.consumer_groups g WHERE g.id = v_group.id FOR NO KEY UPDATE;
    DELETE FROM tributary.consumer_batches b WHERE b.group_id = v_group.id;
    DELETE FROM tributary.consumer_retries r WHERE r.group_id = v_group.id;
    UPDATE tributary.consumer_groups g SET cursor_tx = pos.tx_id, cursor_seq = pos.seq
      FROM tributary.log_position(tributary.group_position(p_to)) pos
     WHERE g.id = v_group.id;
    -- Every lane of a group of lanes to the same place (on Citus, the end of
    -- each lane is its worker's); the lanes stay with their holders.
    UPDATE tributary.group_lanes l
       SET cursor_tx = tributary.lane_position(l.lane, p_to, g.cursor_tx), cursor_seq = g.cursor_seq,
           backlogged = false
      FROM tributary.consumer_groups g
     WHERE g.id = v_group.id AND l.group_id = g.id;
END $$;

-- The lane index of its lane count goes with the last group of that count
-- (drop_lane_index_unless_used).
-- Called by: admins; `tributary group delete`.
CREATE OR REPLACE FUNCTION tributary.group_delete(p_name text) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_lanes int;
BEGIN
    DELETE FROM tributary.consumer_groups g WHERE g.name = p_name RETURNING g.lanes INTO v_lanes;
    IF v_lanes IS NULL THEN
        RETURN false;
    END IF;
    PERFORM tributary.drop_lane_index_unless_used(v_lanes);
    RETURN true;
END $$;
