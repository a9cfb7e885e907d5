-- For `run --until-idle`: every source waiting out an idle pause becomes due
-- as a nudge would make it (one interval after its last answer), so that a
-- catch-up run asks each source rather than trusting an old empty answer.
-- The times are reckoned first (MATERIALIZED): Citus refuses a stable
-- function of a column (timestamptz + interval) in an UPDATE of a
-- distributed table (docs/citus.md). A row changed since (a loader's claim
-- or close committed meanwhile, which the UPDATE sees) keeps its own time:
-- its conditions are checked again on the row the UPDATE locks, and a time
-- reckoned from an older last answer is not used.
WITH due AS MATERIALIZED (
    SELECT g.source_id, g.last_success_at,
           greatest(now(), g.last_success_at + s.interval_ms * interval '1 ms') AS at
      FROM tributary.gates g JOIN tributary.sources s ON s.id = g.source_id
     WHERE s.enabled)
UPDATE tributary.gates g
   SET next_allowed_at = due.at
  FROM due
 WHERE g.source_id = due.source_id AND g.last_success_at = due.last_success_at
   AND g.failures = 0 AND g.last_success_at >= g.last_request AND g.next_allowed_at > due.at
