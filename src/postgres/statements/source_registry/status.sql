-- One row per source: its gate, cursor and, when a session that is not a loader holds its lock,
-- that session (tributary.foreign_locks); then how it pages, its position (sources keyed by text) and
-- its last rewind. A source the API itself asked to wait (rate-limit fields spent on a good answer:
-- its pause, set with last_success_at by the same statement, is longer than its interval, and it
-- is neither idle nor in flight, and its last turn ended in that good answer, not in a release
-- after a stop, which sets no last_success_at) is shown `throttled`, as one refused with a 429 is. A pushed or
-- published source (no gate, no cursor) has its name, switch and kind (the last column), NULLs else.
-- Ages are never negative: a loader stamps its request with its own transaction's now(), which may be
-- later than this statement's now() (and "-0.0s ago" helps nobody).
-- Cursors, gates and rewinds are read first (MATERIALIZED), then joined to the sources: on Citus
-- (docs/citus.md) they are distributed, the sources a reference table, and Citus joins no
-- distributed table to the outer side of a reference table's join.
WITH c AS MATERIALIZED (SELECT * FROM tributary.cursors),
     g AS MATERIALIZED (SELECT * FROM tributary.gates),
     r AS MATERIALIZED (SELECT DISTINCT ON (w.source_id) * FROM tributary.cursor_rewinds w
                         ORDER BY w.source_id, w.id DESC)
SELECT s.name, s.enabled,
       CASE WHEN g.state = 'ok' AND NOT g.drained AND g.lease = g.closed_lease
                 AND g.next_allowed_at > g.last_success_at + s.interval_ms * interval '1 ms'
            THEN 'throttled' ELSE g.state END,
       c.last_event_id, c.events_stored, g.failures,
       greatest(extract(epoch FROM now() - g.last_request)::float8, 0),
       greatest(extract(epoch FROM now() - g.last_success_at)::float8, 0),
       CASE WHEN g.next_allowed_at > now() THEN extract(epoch FROM g.next_allowed_at - now())::float8 ELSE 0 END,
       g.last_error,
       greatest(extract(epoch FROM now() - g.last_error_at)::float8, 0),
       g.backlog,
       f.pid, f.holder_user, f.application,
       to_char(f.since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), f.reason,
       coalesce(s.reading->>'paginate', 'after-id'), c.position, c.taken,
       r.rewound_by, to_char(r.rewound_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), r.from_cursor, r.to_cursor,
       s.kind
  FROM tributary.sources s
  LEFT JOIN c ON c.source_id = s.id
  LEFT JOIN g ON g.source_id = s.id
  LEFT JOIN (SELECT DISTINCT ON (source_id) * FROM tributary.foreign_locks ORDER BY source_id, pid) f
         ON f.source_id = s.id
  LEFT JOIN r ON r.source_id = s.id
 ORDER BY s.name
