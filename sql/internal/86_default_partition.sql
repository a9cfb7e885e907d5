-- Emptying the default partition (issue 26): events of transactions no
-- partition covered (the maintainer was away for longer than the spans
-- ahead) went to tributary.events_default. Retention never takes the
-- default partition, so they would stay for good; `tributary log
-- repartition` moves them into partitions of their own, which then live
-- and leave like any other (docs/operations.md "The default partition").
--
-- Internal (sql/internal/): called by `tributary log repartition`. Runs as
-- its owner (SECURITY DEFINER; search_path pinned): creating and attaching
-- a partition needs the log's owner; tributary_admin and
-- tributary_maintainer may execute it (sql/privileges/20_roles.sql).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Moves the oldest run of the default partition's events into a new
-- partition: the gap between two partitions that holds them (from the end
-- of the partition below; to the start of the next one, or the xmin
-- horizon), cut short after p_max_events events (never inside one
-- transaction's events). Only below the xmin horizon: every transaction
-- there has ended, so no event can still arrive in the range, and the copy
-- is the whole of it. And only below p_below (NULL: no bound): the caller
-- passes the horizon it started at, so that writers still filling the
-- default partition (no maintainer) cannot keep it going for ever.
--
-- Safe while writers and consumers run (docs/design.md "Emptying the
-- default partition"): the events are copied into the new table first,
-- with the log unlocked; then, under an ACCESS EXCLUSIVE lock on the log
-- (waited for 3 s at most, as for a drop: 55P03 after that, nothing
-- changed), they are deleted from the default partition, the table is
-- attached over the range, and the catalogue row is written, all in this
-- one transaction. A reader sees the events in the default partition
-- before it commits, in the new partition after, never both and never
-- neither: it waits for the lock, and its view of the partitions and its
-- snapshot are then both taken after the commit (or, in an older
-- REPEATABLE READ snapshot, the delete and the new rows are both
-- invisible). Every event keeps its seq and tx_id, so a group's cursor and
-- its batches, retries and dead letters mean what they meant.
--
-- Returns one row for the partition made, or none when nothing in the
-- default partition lies below the horizon. The partition is sealed on
-- the maintainer's next pass; its started_at/ended_at are its events'
-- first and last loaded_at (every event in it was loaded by then, which
-- is what retention by time and positions by time rely on).
CREATE OR REPLACE FUNCTION tributary.repartition_default(p_max_events int, p_below xid8,
    OUT name text, OUT from_tx xid8, OUT to_tx xid8, OUT events bigint,
    OUT lock_wait_ms double precision, OUT lock_held_ms double precision)
RETURNS SETOF record
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '3s' AS $$
DECLARE
    v_horizon xid8 := least(pg_snapshot_xmin(pg_current_snapshot()), p_below);
    v_first xid8;
    v_cut xid8;
    v_name text;
    v_from xid8;
    v_to xid8;
    v_events bigint;
    v_columns text;
    v_moved bigint;
    v_first_at timestamptz;
    v_last_at timestamptz;
    v_asked timestamptz;
    v_locked timestamptz;
BEGIN
    IF p_max_events IS NULL OR p_max_events < 1 THEN
        RAISE EXCEPTION 'repartition_default: at least one event at a time' USING ERRCODE = '22023';
    END IF;
    -- Not yet on Citus: the horizon would have to be every worker's, and the new table a
    -- distributed one (docs/citus.md "What does not work yet").
    IF tributary.log_is_distributed() AND EXISTS (SELECT 1 FROM tributary.events_default) THEN
        RAISE EXCEPTION 'log repartition does not work on a distributed log yet' USING ERRCODE = '0A000';
    END IF;
    v_first := (SELECT min(d.tx_id) FROM tributary.events_default d WHERE d.tx_id < v_horizon);
    IF v_first IS NULL THEN
        RETURN;
    END IF;
    -- The gap around v_first.
    v_from := coalesce((SELECT max(p.to_tx) FROM tributary.partitions p WHERE p.to_tx <= v_first), v_first);
    v_to := least((SELECT min(p.from_tx) FROM tributary.partitions p WHERE p.from_tx > v_first), v_horizon);
    v_cut := (SELECT d.tx_id FROM tributary.events_default d
               WHERE d.tx_id >= v_first AND d.tx_id < v_to
               ORDER BY d.tx_id, d.seq OFFSET p_max_events LIMIT 1);
    IF v_cut IS NOT NULL THEN
        v_to := CASE WHEN v_cut > v_first THEN v_cut ELSE tributary.xid_plus(v_first, 1) END;
    END IF;
    v_name := 'events_' || v_from::text;

    -- The copy, with the log unlocked (the range takes no new event).
    EXECUTE format('CREATE TABLE tributary.%I (LIKE tributary.events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                   v_name);
    -- Proves the rows fit the range: ATTACH then skips its scan of them.
    EXECUTE format('ALTER TABLE tributary.%I ADD CONSTRAINT %I CHECK (tx_id >= %L::xid8 AND tx_id < %L::xid8)',
                   v_name, v_name || '_range', v_from, v_to);
    -- By name: the two tables need not order their columns alike.
    SELECT string_agg(quote_ident(a.attname), ', ' ORDER BY a.attnum) INTO v_columns
      FROM pg_attribute a WHERE a.attrelid = 'tributary.events'::regclass AND a.attnum > 0 AND NOT a.attisdropped;
    EXECUTE format('INSERT INTO tributary.%I (%s) SELECT %s FROM tributary.events_default d
                     WHERE d.tx_id >= $1 AND d.tx_id < $2 ORDER BY d.tx_id, d.seq', v_name, v_columns, v_columns)
        USING v_from, v_to;
    GET DIAGNOSTICS v_events = ROW_COUNT;
    EXECUTE format('SELECT min(e.loaded_at), max(e.loaded_at) FROM tributary.%I e', v_name) INTO v_first_at, v_last_at;
    EXECUTE format('CREATE UNIQUE INDEX %I ON tributary.%I (seq)', v_name || '_seq', v_name);
    EXECUTE format('CREATE UNIQUE INDEX %I ON tributary.%I (source_id, event_id)', v_name || '_source_event_id', v_name);
    EXECUTE format('CREATE INDEX %I ON tributary.%I (tx_id, seq)', v_name || '_tx_seq', v_name);

    -- The switch: everyone who reads or writes the log takes the parent's lock first.
    v_asked := clock_timestamp();
    LOCK TABLE ONLY tributary.events IN ACCESS EXCLUSIVE MODE;
    LOCK TABLE tributary.events_default IN ACCESS EXCLUSIVE MODE;
    v_locked := clock_timestamp();
    -- Another run moved this range first (it committed while this one copied).
    IF EXISTS (SELECT FROM tributary.partitions p WHERE p.from_tx < v_to AND p.to_tx > v_from) THEN
        RAISE EXCEPTION 'repartition_default: the range [%, %) was repartitioned meanwhile', v_from, v_to
            USING ERRCODE = '40001';
    END IF;
    DELETE FROM tributary.events_default d WHERE d.tx_id >= v_from AND d.tx_id < v_to;
    GET DIAGNOSTICS v_moved = ROW_COUNT;
    IF v_moved <> v_events THEN  -- cannot happen (the range is below the horizon); never lose one if it does
        RAISE EXCEPTION 'repartition_default: % events copied but % in the default partition', v_events, v_moved
            USING ERRCODE = '40001';
    END IF;
    EXECUTE format('ALTER TABLE tributary.events ATTACH PARTITION tributary.%I FOR VALUES FROM (%L) TO (%L)',
                   v_name, v_from, v_to);
    INSERT INTO tributary.partitions (name, from_tx, to_tx, started_at, ended_at)
    VALUES (v_name, v_from, v_to, v_first_at, v_last_at);
    name := v_name; from_tx := v_from; to_tx := v_to; events := v_events;
    lock_wait_ms := extract(epoch FROM v_locked - v_asked) * 1000;
    lock_held_ms := extract(epoch FROM clock_timestamp() - v_locked) * 1000;
    RETURN NEXT;
END $$;

-- What is left in the default partition after repartition_default: events
-- (counted), and how many of them are at or above the xmin horizon (their
-- range may still take events: a later run moves them).
CREATE OR REPLACE FUNCTION tributary.default_partition_left(OUT events bigint, OUT unsealed bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- PL/pgSQL, not SQL: its body is not checked against the tables when `migrate` creates it,
    -- which it does before the last step of migration 0013 makes the default partition.
    SELECT count(*), count(*) FILTER (WHERE d.tx_id >= pg_snapshot_xmin(pg_current_snapshot()))
      INTO events, unsealed
      FROM tributary.events_default d;
END $$;
