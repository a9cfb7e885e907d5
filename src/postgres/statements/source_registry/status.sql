-- One row per source: its gate, cursor and, when a session that is not a loader holds its lock,
-- that session (tributary.foreign_locks); then how it pages, its position (sources keyed by text) and
-- its last rewind. A source the API itself asked to wait (rate-limit fields spent on a good answer:
-- its pause, set with last_success_at by the same statement, is longer than its interval, and it
-- is neither idle nor in flight, and its last turn ended in that good answer, not in a release
-- after a stop, which sets no last_success_at) is shown `throttled`, as one refused with a 429 is. A pushed or
-- published source (no gate, no cursor) has its name, switch and kind (the last column), NULLs else.
SELECT s.name, s.enabled,
       CASE WHEN g.state = 'ok' AND NOT g.drained AND g.lease = g.closed_lease
                 AND g.next_allowed_at > g.last_success_at + s.interval_ms * interval '1 ms'
            THEN 'throttled' ELSE g.state END,
       c.last_event_id, c.events_stored, g.failures,
       extract(epoch FROM now() - g.last_request)::float8,
       extract(epoch FROM now() - g.last_success_at)::float8,
       CASE WHEN g.next_allowed_at > now() THEN extract(epoch FROM g.next_allowed_at - now())::float8 ELSE 0 END,
       g.last_error,
       extract(epoch FROM now() - g.last_error_at)::float8,
       g.backlog,
       f.pid, f.holder_user, f.application,
       to_char(f.since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), f.reason,
       coalesce(s.reading->>'paginate', 'after-id'), c.position, c.taken,
       r.rewound_by, to_char(r.rewound_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), r.from_cursor, r.to_cursor,
       s.kind
  FROM tributary.sources s
  LEFT JOIN tributary.cursors c ON c.source_id = s.id
  LEFT JOIN tributary.gates g ON g.source_id = s.id
  LEFT JOIN (SELECT DISTINCT ON (source_id) * FROM tributary.foreign_locks ORDER BY source_id, pid) f
         ON f.source_id = s.id
  LEFT JOIN LATERAL (SELECT * FROM tributary.cursor_rewinds w WHERE w.source_id = s.id ORDER BY w.id DESC LIMIT 1) r
         ON true
 ORDER BY s.name
