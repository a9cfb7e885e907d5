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
CREATE OR REPLACE FUNCTION tributary.nudge_gate(p_name text) RETURNS SETOF int
LANGUAGE sql AS $$
UPDATE tributary.gates g
   SET nudged_at = now(), empty_streak = 0,
       next_allowed_at = CASE WHEN g.failures = 0 AND g.last_success_at >= g.last_request
                              THEN least(g.next_allowed_at,
                                         greatest(now(), g.last_success_at + s.interval_ms * interval '1 ms'))
                              ELSE g.next_allowed_at END
  FROM tributary.sources s
 WHERE s.name = p_name AND g.source_id = s.id
RETURNING g.source_id $$;
