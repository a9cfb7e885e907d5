-- One statement, one `now()`: the due sources of the share ($1 = workers,
-- $2 = this worker's index, $3 = take-over delay in ms) with what the fetcher
-- needs, earliest due first; then a summary row (id NULL) for the rest. The
-- summary row always exists: an aggregate over no rows still returns one.
-- The conditions are on the gates' own columns, so they filter the gates
-- scan before any join. A source with a request in flight (its lease not
-- closed) is not "pending" for anyone else: its holder sees it through, and
-- a worker waiting on it would sleep past its backoff and ask it again.
-- Headers travel as one newline-separated string (a header cannot contain a
-- newline), which spares us array-literal quoting; how each is read as
-- JSON text (postgres/source_reading.h). The last column is the settings' revision (`source edit`),
-- which the claim checks.
(SELECT s.id, s.name, s.url, array_to_string(s.headers, E'\n'), s.interval_ms, s.batch_size, s.timeout_ms, true,
        s.reading::text, NULL::double precision, NULL::bigint, s.revision
   FROM tributary.gates g JOIN tributary.sources s ON s.id = g.source_id
  WHERE s.enabled
    AND g.next_allowed_at <= now() - CASE WHEN g.source_id % $1 = $2 THEN interval '0' ELSE $3 * interval '1 ms' END
  ORDER BY g.next_allowed_at, g.source_id)
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       extract(epoch FROM min(due_for_us) - now()) * 1000,
       count(*) FILTER (WHERE NOT drained AND failures = 0 AND lease = closed_lease), NULL::bigint
  FROM (SELECT g.next_allowed_at + CASE WHEN g.source_id % $1 = $2 THEN interval '0' ELSE $3 * interval '1 ms' END
               AS due_for_us, g.drained, g.failures, g.lease, g.closed_lease
          FROM tributary.gates g
         WHERE NOT EXISTS (SELECT FROM tributary.sources s WHERE s.id = g.source_id AND NOT s.enabled)) later
 WHERE due_for_us > now()
