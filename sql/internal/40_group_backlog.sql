-- A group's backlog, for the view group_status (api/60_group_status.sql).
-- It runs as its owner (SECURITY DEFINER): a view's callers need EXECUTE on
-- the functions it calls, and this one reads events and sources.
--
-- Internal (sql/internal/): steps of the public functions and the loader's
-- own functions. Nothing outside tributary should call them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- A group's backlog: events of its sources after its cursor, and the oldest
-- loaded_at among them. Counting scans the backlog: cheap while consumers keep
-- up. Without JIT, which costs more than the count on the large estimates
-- that a big backlog gives. The group's sources as its reads keep them (one
-- bit per source id, see lease_fresh), matched again only when a change to
-- the sources cleared them: the change clears them in its own transaction,
-- so a snapshot that sees a new source sees them cleared. '>': every source,
-- nothing to check per event. The matches are a CTE MATERIALIZED: as a
-- subquery in FROM the planner pulled them up and matched every source's
-- name again for each event (minutes for 100 000 events of a group whose
-- matches a change to the sources had cleared, at 10 000 sources).
-- Called by: the view group_status.
CREATE OR REPLACE FUNCTION tributary.group_backlog(g tributary.consumer_groups, OUT events bigint, OUT oldest timestamptz)
LANGUAGE plpgsql STABLE SET jit = off
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_bits bit varying;
    v_lane record;
    v_behind record;
BEGIN
    -- On Citus, lane by lane, each a count on its shard's worker.
    IF tributary.lanes_by_shard() THEN
        events := 0;
        v_bits := CASE WHEN g.pattern <> '>'
                       THEN coalesce(g.source_bits, tributary.matching_source_bits(g.pattern)) END;
        FOR v_lane IN SELECT l.lane, l.cursor_tx, l.cursor_seq FROM tributary.group_lanes l WHERE l.group_id = g.id LOOP
            g.cursor_tx := v_lane.cursor_tx;
            g.cursor_seq := v_lane.cursor_seq;
            SELECT * INTO v_behind
              FROM tributary.lane_backlog_capped(g, v_lane.lane, tributary.lane_sources(v_lane.lane, v_bits), NULL);
            events := events + v_behind.events;
            oldest := least(oldest, v_behind.oldest);
        END LOOP;
        RETURN;
    END IF;
    -- PL/pgSQL, not SQL, and lanes_of: see lanes_of (migration 0017).
    WITH m AS MATERIALIZED (
        SELECT CASE WHEN g.pattern <> '>' THEN coalesce(g.source_bits, tributary.matching_source_bits(g.pattern)) END AS bits,
               lo.cursor_tx, lo.cursor_seq, tributary.lanes_of(g) AS lanes
          FROM tributary.group_low_cursor(g) lo)
    SELECT count(*), min(e.loaded_at) INTO events, oldest
      FROM m, tributary.events e
     WHERE (e.tx_id, e.seq) > (m.cursor_tx, m.cursor_seq)
       AND e.tx_id >= m.cursor_tx    -- prunes the partitions below
       AND (m.bits IS NULL OR (e.source_id < length(m.bits) AND get_bit(m.bits, e.source_id) = 1))
       -- A group of lanes: from the lowest lane's cursor, each event after its own lane's.
       AND (m.lanes = 1 OR EXISTS (SELECT FROM tributary.group_lanes l
                                    WHERE l.group_id = g.id AND l.lane = e.source_id % m.lanes
                                      AND (e.tx_id, e.seq) > (l.cursor_tx, l.cursor_seq)));
END $$;

-- A group's backlog counted up to a cap, for the console's pages (issue 17):
-- events = the exact count when it is at most p_cap (capped false), else
-- p_cap (capped true: "at least"); oldest = the oldest loaded_at among the
-- events counted, so exact when not capped, and otherwise that of the head
-- of the backlog. group_backlog counts all of it (about 0.35 µs an event, in
-- every group: 0.5 s for 5 groups 300 000 events behind); this reads at most
-- p_cap + 1 of the group's events:
--   - a group of at most 64 sources (one source: its name, an index step),
--     through each source's own index (source_id, event_id) from the
--     partition of the cursor on: p_cap + 1 of each at most, so the cost is
--     bounded by the cap and the sources' events in that one partition, not
--     by how much of the log lies after the cursor. The events counted are
--     then not the first in the log's order: when capped, oldest is the
--     oldest of those (for a source read by id, its first ones);
--   - any other, the log's (tx_id, seq) index from the cursor on, in order:
--     p_cap + 1 of the group's events, which reads p_cap divided by the
--     share of the log that is the group's (a group of 1 % of the log reads
--     100 events per event counted). When capped, oldest is the oldest of
--     the first p_cap + 1 (a transaction that began before them but wrote
--     later could hold an older one: loaded_at is a transaction's start).
-- Matches as group_backlog's. On Citus lane by lane (each lane's events
-- are in one shard, counted on its worker), up to the cap in all.
-- Called by: console_group_status.
CREATE OR REPLACE FUNCTION tributary.group_backlog_capped(g tributary.consumer_groups, p_cap bigint,
                                                          OUT events bigint, OUT capped boolean,
                                                          OUT oldest timestamptz)
LANGUAGE plpgsql STABLE SET jit = off
-- Without sorts: the planner, expecting a large share of the log to match,
-- read every event after the cursor and sorted them (the top p_cap + 1)
-- rather than follow the index in order and stop (200 ms instead of 11 for
-- a group of a fifth of the log 1 000 000 events behind, cap 10 000).
SET enable_sort = off
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_bits bit varying;
    v_few int[];
    v_lane record;
    v_sources bit varying;
    v_behind record;
BEGIN
    -- On Citus lane by lane, each lane's events after its own cursor counted
    -- on its shard's worker (lane_backlog_capped), each up to what the cap
    -- leaves; lanes without a source of the group are not asked.
    IF tributary.lanes_by_shard() THEN
        events := 0;
        capped := false;
        v_bits := CASE WHEN g.pattern <> '>'
                       THEN coalesce(g.source_bits, tributary.matching_source_bits(g.pattern)) END;
        FOR v_lane IN SELECT l.lane, l.cursor_tx, l.cursor_seq FROM tributary.group_lanes l
                       WHERE l.group_id = g.id ORDER BY l.lane LOOP
            EXIT WHEN capped;
            v_sources := tributary.lane_sources(v_lane.lane, v_bits);
            CONTINUE WHEN position('1' IN v_sources::text) = 0;
            g.cursor_tx := v_lane.cursor_tx;
            g.cursor_seq := v_lane.cursor_seq;
            SELECT * INTO v_behind FROM tributary.lane_backlog_capped(g, v_lane.lane, v_sources, p_cap - events);
            events := events + v_behind.events;
            capped := v_behind.capped;
            oldest := least(oldest, v_behind.oldest);
        END LOOP;
        RETURN;
    END IF;
    -- A group of lanes from its lowest lane's cursor: may count events a
    -- lane further on has handed out already (the console's figure is capped
    -- and an estimate anyway); group_backlog counts exactly.
    g := tributary.group_low_cursor(g);
    IF NOT tributary.pattern_has_wildcard(g.pattern) THEN
        v_few := ARRAY(SELECT s.id FROM tributary.sources s WHERE s.name = g.pattern);
    ELSIF g.pattern <> '>' THEN
        v_bits := coalesce(g.source_bits, tributary.matching_source_bits(g.pattern));
        IF length(replace(v_bits::text, '0', '')) <= 64 THEN
            v_few := ARRAY(SELECT i FROM generate_series(0, length(v_bits) - 1) i WHERE get_bit(v_bits, i) = 1);
        END IF;
    END IF;
    IF v_few IS NOT NULL THEN
        SELECT least(count(*), p_cap), count(*) > p_cap, min(h.loaded_at) INTO events, capped, oldest
          FROM (SELECT x.loaded_at
                  FROM unnest(v_few) f(id)
                 CROSS JOIN LATERAL (
                       SELECT e.loaded_at FROM tributary.events e
                        WHERE e.source_id = f.id
                          AND (e.tx_id, e.seq) > (g.cursor_tx, g.cursor_seq)
                          AND e.tx_id >= g.cursor_tx    -- prunes the partitions below
                        LIMIT p_cap + 1) x
                 LIMIT p_cap + 1) h;
    ELSE
        SELECT least(count(*), p_cap), count(*) > p_cap, min(h.loaded_at) INTO events, capped, oldest
          FROM (SELECT e.loaded_at
                  FROM tributary.events e
                 WHERE (e.tx_id, e.seq) > (g.cursor_tx, g.cursor_seq)
                   AND e.tx_id >= g.cursor_tx    -- prunes the partitions below
                   AND (v_bits IS NULL OR (e.source_id < length(v_bits) AND get_bit(v_bits, e.source_id) = 1))
                 ORDER BY e.tx_id, e.seq
                 LIMIT p_cap + 1) h;
    END IF;
END $$;

-- The oldest loaded_at of events p_seqs of sources p_sources, written
-- between p_from and p_to: one statement Citus sends whole to the sources'
-- worker (the values written in), where a join of the coordinator's
-- batches or retries with the distributed log is refused (docs/citus.md).
-- Called by: group_flight, group_retries (on Citus).
CREATE OR REPLACE FUNCTION tributary.oldest_loaded(p_sources int[], p_seqs bigint[], p_from xid8, p_to xid8)
RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_oldest timestamptz;
BEGIN
    EXECUTE format('SELECT min(e.loaded_at) FROM tributary.events e WHERE e.source_id = ANY (%L::int[])'
                   ' AND e.seq = ANY (%L::bigint[]) AND e.tx_id BETWEEN %L AND %L',
                   p_sources, p_seqs, tributary.tx_from(p_from), tributary.tx_to(p_to))
       INTO v_oldest;
    RETURN v_oldest;
END $$;

-- Group g's batches in flight, and the oldest loaded_at of their events
-- (on Citus batch by batch: oldest_loaded).
-- Called by: group_status_of.
CREATE OR REPLACE FUNCTION tributary.group_flight(g tributary.consumer_groups, OUT batches int, OUT oldest timestamptz)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF tributary.lanes_by_shard() THEN
        SELECT count(*)::int, min(tributary.oldest_loaded(b.source_ids, b.seqs, b.tx_from, b.tx_to))
          INTO batches, oldest
          FROM tributary.consumer_batches b WHERE b.group_id = g.id;
        RETURN;
    END IF;
    SELECT count(*)::int,
           (SELECT min(e.loaded_at) FROM tributary.consumer_batches b2
              JOIN tributary.events e
                ON e.seq = ANY (b2.seqs)
               AND e.tx_id BETWEEN tributary.tx_from(b2.tx_from) AND tributary.tx_to(b2.tx_to)
             WHERE b2.group_id = g.id)
      INTO batches, oldest
      FROM tributary.consumer_batches b WHERE b.group_id = g.id;
END $$;

-- Group g's events waiting for a retry, and the oldest loaded_at among
-- them (on Citus event by event: oldest_loaded).
-- Called by: group_status_of.
CREATE OR REPLACE FUNCTION tributary.group_retries(g tributary.consumer_groups, OUT events int, OUT oldest timestamptz)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF tributary.lanes_by_shard() THEN
        SELECT count(*)::int, min(tributary.oldest_loaded(ARRAY[r.source_id], ARRAY[r.seq], r.tx_from, r.tx_to))
          INTO events, oldest
          FROM tributary.consumer_retries r WHERE r.group_id = g.id;
        RETURN;
    END IF;
    SELECT count(*)::int, min(e.loaded_at) INTO events, oldest
      FROM tributary.consumer_retries r
      JOIN tributary.events e
        ON e.seq = r.seq AND e.tx_id BETWEEN tributary.tx_from(r.tx_from) AND tributary.tx_to(r.tx_to)
     WHERE r.group_id = g.id;
END $$;
