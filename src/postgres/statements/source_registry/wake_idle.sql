-- For `run --until-idle`: every source waiting out an idle pause becomes due
-- as a nudge would make it (one interval after its last answer), so that a
-- catch-up run asks each source rather than trusting an old empty answer.
UPDATE tributary.gates g
   SET next_allowed_at = greatest(now(), g.last_success_at + s.interval_ms * interval '1 ms')
  FROM tributary.sources s
 WHERE g.source_id = s.id AND s.enabled AND g.failures = 0 AND g.last_success_at >= g.last_request
   AND g.next_allowed_at > greatest(now(), g.last_success_at + s.interval_ms * interval '1 ms')
