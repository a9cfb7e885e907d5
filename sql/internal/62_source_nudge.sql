-- Nudging a pulled source: `run --listen`'s POST /sources/NAME/nudge
-- (src/postgres/statements/source_registry/nudge.sql) and the console's
-- nudge (sql/api/94_console_actions.sql) share it.
--
-- Internal (sql/internal/): runs with the caller's rights (the loader
-- updates gates anyway; the console's function runs as the owner).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- A nudge never lets a request through sooner than the gate would: it only
-- brings an idle source's next request forward to one interval after the
-- last one ended, and only when that request is over and went well (a
-- request in flight holds its lease; a failing source keeps its backoff).
-- It always records itself, so that a request in flight ends at the
-- interval rather than an idle pause. Returns the source's id, or no row
-- when no pulled source has that name. The caller tells the loaders
-- (pg_notify on tributary_control, 'sources').
-- Called by: nudge.sql (run's nudge), console_nudge.
-- The gate row is locked first and the time reckoned from it, then written:
-- Citus refuses a stable function of a column (timestamptz + interval) in
-- an UPDATE of a distributed table (docs/citus.md), and a time reckoned
-- from a row read without its lock could predate a close committed
-- meanwhile (the request after it would come too soon). By the source's
-- id: Citus locks a distributed table's rows only by their distribution
-- column.
CREATE OR REPLACE FUNCTION tributary.nudge_gate(p_name text) RETURNS SETOF int
LANGUAGE plpgsql AS $$
DECLARE
    v_source tributary.sources;
    v_gate record;
    v_next timestamptz;
BEGIN
    SELECT * INTO v_source FROM tributary.sources s WHERE s.name = p_name;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT g.failures, g.last_success_at, g.last_request, g.next_allowed_at INTO v_gate
      FROM tributary.gates g WHERE g.source_id = v_source.id FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;  -- pushed or published: no gate
    END IF;
    IF v_gate.failures = 0 AND v_gate.last_success_at >= v_gate.last_request THEN
        v_next := least(v_gate.next_allowed_at,
                        greatest(now(), v_gate.last_success_at + v_source.interval_ms * interval '1 ms'));
    ELSE
        v_next := v_gate.next_allowed_at;
    END IF;
    UPDATE tributary.gates g SET nudged_at = now(), empty_streak = 0, next_allowed_at = v_next
     WHERE g.source_id = v_source.id;
    RETURN NEXT v_source.id;
END $$;
