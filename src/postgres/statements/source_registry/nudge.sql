-- A nudge never lets a request through sooner than the gate would: it only
-- brings an idle source's next request forward to one interval after the
-- last one ended, and only when that request is over and went well (a
-- request in flight holds its lease; a failing source keeps its backoff).
-- It always records itself, so that a request in flight ends at the
-- interval rather than an idle pause.
UPDATE tributary.gates g
   SET nudged_at = now(), empty_streak = 0,
       next_allowed_at = CASE WHEN g.failures = 0 AND g.last_success_at >= g.last_request
                              THEN least(g.next_allowed_at,
                                         greatest(now(), g.last_success_at + s.interval_ms * interval '1 ms'))
                              ELSE g.next_allowed_at END
  FROM tributary.sources s
 WHERE s.name = $1 AND g.source_id = s.id
RETURNING g.source_id
