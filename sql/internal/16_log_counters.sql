-- The transaction counters the partitioned log is cut by, and what each
-- partition holds, on one PostgreSQL and on Citus (docs/citus.md "The
-- maintainer on Citus").
--
-- On one PostgreSQL there is one counter: the partitions follow it, and a
-- partition is sealed once every transaction below its end has ended. On
-- Citus every worker stores its events with its own transaction ids
-- (05_distribution.sql), so a partition [a, b) holds, on each worker, the
-- events of that worker's transactions in [a, b). Carried over:
--   - partitions are made ahead of the FASTEST worker's counter (else its
--     events land in the default partition), and the rate of ids is that
--     worker's;
--   - a partition has ended once EVERY worker's counter passed its end, and
--     is sealed once every transaction below its end has ended on EVERY
--     worker (each worker's xmin);
--   - its size and sources are its shards' on the workers.
-- A worker whose counter lags (less traffic, or none) would keep every
-- partition below the fastest's open for ever: the maintainer moves it on
-- (advance_worker_counters).
--
-- Internal (sql/internal/): steps of the maintainer's functions
-- (80_partitions.sql, 82_retention.sql, 83_log_status.sql). Nothing
-- outside tributary should call them. They call Citus' functions only when
-- the log is distributed (PL/pgSQL plans a statement when it first runs).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- The counters of the nodes that store the log: next_low and next_high the
-- lowest and the highest next transaction id among them, xmin_low the
-- lowest xmin (every transaction below it has ended on every one of them).
-- One PostgreSQL: its own, all three. Citus: each worker's, read in one
-- statement on every worker (run_command_on_workers: connections of their
-- own, outside the caller's transaction); a worker that does not answer
-- raises (no counter is guessed).
-- Called by: partitions_ahead, observe_partitions, log_status.
CREATE OR REPLACE FUNCTION tributary.log_counters(OUT next_low xid8, OUT next_high xid8, OUT xmin_low xid8)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_failed text;
BEGIN
    IF NOT tributary.log_is_distributed() THEN
        next_low := tributary.next_xid();
        next_high := next_low;
        xmin_low := pg_snapshot_xmin(pg_current_snapshot());
        RETURN;
    END IF;
    SELECT min(split_part(w.result, ' ', 1)::xid8) FILTER (WHERE w.success),
           max(split_part(w.result, ' ', 1)::xid8) FILTER (WHERE w.success),
           min(split_part(w.result, ' ', 2)::xid8) FILTER (WHERE w.success),
           string_agg(w.nodename || ':' || w.nodeport || ': ' || w.result, '; ') FILTER (WHERE NOT w.success)
      INTO next_low, next_high, xmin_low, v_failed
      FROM run_command_on_workers($c$SELECT pg_snapshot_xmax(pg_current_snapshot()) || ' '
                                            || pg_snapshot_xmin(pg_current_snapshot())$c$) w;
    IF v_failed IS NOT NULL OR next_high IS NULL THEN
        RAISE EXCEPTION 'the workers'' transaction counters could not be read: %', coalesce(v_failed, 'no worker')
            USING ERRCODE = '58000';
    END IF;
END $$;

-- The next transaction id of the log's fastest node (log_counters).
-- Called by: partitions_ahead, log_status.
CREATE OR REPLACE FUNCTION tributary.log_next_xid() RETURNS xid8
LANGUAGE sql VOLATILE AS $$ SELECT c.next_high FROM tributary.log_counters() c $$;

-- Citus only: moves the counter of every worker that is below p_to up to
-- it, by at most p_most ids a call (advance_counters). A worker with little
-- or no traffic would otherwise stay below partitions the fastest worker
-- left long ago, and they could never be sealed: that worker may still
-- store events in them. Costs that worker as many ids as the fastest uses,
-- never more than one PostgreSQL taking the whole load would.
-- Called by: observe_partitions.
CREATE OR REPLACE FUNCTION tributary.advance_worker_counters(p_to xid8, p_most int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM tributary.advance_counters(p_to, p_most, NULL);
END $$;

-- Citus only: moves the counter of every worker below p_to (of worker
-- group p_group alone, when given) up to it, by at most p_most ids a call:
-- a loop of empty transactions on the worker, each taking one id
-- (asynchronous commits: no wait for the disk; about 80 000 ids a second
-- on the test VM).
-- Called by: advance_worker_counters, advance_group_counter (a shard move's).
CREATE OR REPLACE FUNCTION tributary.advance_counters(p_to xid8, p_most int, p_group int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_failed text;
BEGIN
    SELECT string_agg(w.nodename || ':' || w.nodeport || ': ' || w.result, '; ') INTO v_failed
      FROM run_command_on_workers(format(
               $c$DO $d$ BEGIN
                     IF %s IS NOT NULL AND (SELECT g.groupid FROM pg_catalog.pg_dist_local_group g) <> %1$s THEN
                         RETURN;
                     END IF;
                     FOR i IN 1..%s LOOP
                         EXIT WHEN pg_snapshot_xmax(pg_current_snapshot()) >= %L::xid8;
                         PERFORM set_config('synchronous_commit', 'off', true), pg_current_xact_id();
                         COMMIT;
                     END LOOP; END $d$ $c$, coalesce(p_group::text, 'NULL'), p_most, p_to)) w
     WHERE NOT w.success;
    IF v_failed IS NOT NULL THEN
        RAISE EXCEPTION 'the workers'' transaction counters could not be moved on: %', v_failed USING ERRCODE = '58000';
    END IF;
END $$;

-- The size of partition p_name on disk, indexes and TOAST included: on
-- Citus, of its shards on the workers (the coordinator's table is an empty
-- shell). NULL when there is no such table.
-- Called by: observe_partitions, partition_retention, log_status, log_partitions.
CREATE OR REPLACE FUNCTION tributary.partition_bytes(p_name text) RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_table regclass := to_regclass(format('tributary.%I', p_name));
BEGIN
    IF v_table IS NULL THEN
        RETURN NULL;
    ELSIF tributary.log_is_distributed() THEN
        RETURN citus_total_relation_size(v_table);
    END IF;
    RETURN pg_total_relation_size(v_table);
END $$;

-- The sources with events in partition p_name, sorted: a skip through its
-- (source_id, event_id) index, one probe per source. Citus refuses a
-- recursive query over a distributed table; there a DISTINCT by the
-- distribution column, which each shard answers on its worker over
-- connections Citus keeps (its part of the index read once, when the
-- partition is sealed). The same skip through run_command_on_shards opened
-- a connection per shard at every call: 240 ms for 32 shards on the test VM,
-- past the maintainer's statement timeout under the crash suite's load,
-- against 8 ms.
-- Called by: observe_partitions.
CREATE OR REPLACE FUNCTION tributary.partition_sources(p_name text) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE
    v_sources int[];
BEGIN
    IF tributary.log_is_distributed() THEN
        EXECUTE format('SELECT coalesce(array_agg(s.source_id ORDER BY s.source_id), ''{}'')'
                       ' FROM (SELECT DISTINCT e.source_id FROM tributary.%I e) s', p_name)
           INTO v_sources;
        RETURN v_sources;
    END IF;
    EXECUTE format($q$
        WITH RECURSIVE s AS (
            SELECT min(e.source_id) AS id FROM tributary.%1$I e
            UNION ALL
            SELECT (SELECT min(e.source_id) FROM tributary.%1$I e WHERE e.source_id > s.id) FROM s WHERE s.id IS NOT NULL)
        SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') FROM s WHERE s.id IS NOT NULL $q$, p_name)
       INTO v_sources;
    RETURN v_sources;
END $$;

-- Citus only: how many events of partition p (sealed) group p_group_id has not been
-- handed yet, counting at most p_limit (NULL: all). A group reads a lane
-- per shard, each after its own cursor in its worker's ids; a source's
-- events are all in one shard. So, for each source in p that the group
-- matches (p_bits; NULL: every source): its events in p after the cursor of
-- its lane, counted on its worker (a statement with the source's id written
-- in, which Citus sends there whole). A lane with no row yet counts from the
-- beginning (p_cursor_tx/p_cursor_seq, the group's cursors, are other nodes'
-- ids there, and not used).
-- Called by: retention_holders, retention_drop.
CREATE OR REPLACE FUNCTION tributary.unread_in_partition_by_lane(p_group_id int, p_cursor_tx xid8, p_cursor_seq bigint,
                                                                 p tributary.partitions, p_bits bit varying,
                                                                 p_limit bigint) RETURNS bigint
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_source int;
    v_cursor_tx xid8;
    v_cursor_seq bigint;
    v_count bigint;
    v_total bigint := 0;
BEGIN
    FOR v_source IN SELECT s.id FROM unnest(coalesce(p.source_ids, '{}')) s(id)
                     WHERE p_bits IS NULL OR (s.id < length(p_bits) AND get_bit(p_bits, s.id) = 1)
                     ORDER BY s.id LOOP
        SELECT l.cursor_tx, l.cursor_seq INTO v_cursor_tx, v_cursor_seq
          FROM tributary.group_lanes l WHERE l.group_id = p_group_id AND l.lane = tributary.shard_lane(v_source);
        IF NOT FOUND THEN
            -- No row for its lane: from the beginning (a group's own cursor and
            -- the lowest of its lanes' are ids of other nodes, which could be too high).
            v_cursor_tx := '0';
            v_cursor_seq := 0;
        END IF;
        IF v_cursor_tx >= p.to_tx THEN
            CONTINUE;
        END IF;
        EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM tributary.events e'
                       ' WHERE e.source_id = %s AND e.tx_id >= %L::xid8 AND e.tx_id < %L::xid8'
                       ' AND (e.tx_id, e.seq) > (%L::xid8, %s) LIMIT %s) u',
                       v_source, greatest(p.from_tx, v_cursor_tx), p.to_tx, v_cursor_tx, v_cursor_seq,
                       coalesce((p_limit - v_total)::text, 'ALL'))
            INTO v_count;
        v_total := v_total + v_count;
        IF v_total >= p_limit THEN
            RETURN v_total;
        END IF;
    END LOOP;
    RETURN v_total;
END $$;
