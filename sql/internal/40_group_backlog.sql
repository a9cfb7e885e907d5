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
LANGUAGE sql STABLE SET jit = off
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
WITH m AS MATERIALIZED (
    SELECT CASE WHEN g.pattern <> '>' THEN coalesce(g.source_bits, tributary.matching_source_bits(g.pattern)) END AS bits)
SELECT count(*), min(e.loaded_at)
  FROM m, tributary.events e
 WHERE (e.tx_id, e.seq) > (g.cursor_tx, g.cursor_seq)
   AND e.tx_id >= g.cursor_tx    -- prunes the partitions below
   AND (m.bits IS NULL OR (e.source_id < length(m.bits) AND get_bit(m.bits, e.source_id) = 1)) $$;

-- A group's backlog counted up to a cap, for the console's pages (issue 17):
-- events = the exact count when it is at most p_cap (capped false), else
-- p_cap (capped true: "at least"); oldest = the oldest loaded_at among the
-- first p_cap + 1 events after the cursor in (tx_id, seq) order, so exact
-- when not capped, and otherwise the age of the head of the backlog (a
-- transaction that began before those events but wrote later could hold an
-- older one: loaded_at is its start). It reads at most p_cap + 1 of the
-- group's events through the log's (tx_id, seq) index, starting at the
-- cursor: its cost is bounded by the cap, not the backlog (group_backlog
-- counts all of it, about 0.35 µs an event). A pattern whose sources are
-- rare in the log still reads past the other sources' events until it has
-- p_cap + 1 of its own or reaches the end. Matches as group_backlog's.
-- Called by: console_group_status.
CREATE OR REPLACE FUNCTION tributary.group_backlog_capped(g tributary.consumer_groups, p_cap bigint,
                                                          OUT events bigint, OUT capped boolean,
                                                          OUT oldest timestamptz)
LANGUAGE sql STABLE SET jit = off
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
WITH m AS MATERIALIZED (
    SELECT CASE WHEN g.pattern <> '>' THEN coalesce(g.source_bits, tributary.matching_source_bits(g.pattern)) END AS bits),
head AS (
    SELECT e.loaded_at
      FROM m, tributary.events e
     WHERE (e.tx_id, e.seq) > (g.cursor_tx, g.cursor_seq)
       AND e.tx_id >= g.cursor_tx    -- prunes the partitions below
       AND (m.bits IS NULL OR (e.source_id < length(m.bits) AND get_bit(m.bits, e.source_id) = 1))
     ORDER BY e.tx_id, e.seq
     LIMIT p_cap + 1)
SELECT least(count(*), p_cap), count(*) > p_cap, min(head.loaded_at) FROM head $$;
