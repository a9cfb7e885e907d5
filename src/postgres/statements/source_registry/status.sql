SELECT s.name, s.enabled, g.state, c.last_event_id, c.events_stored, g.failures,
       extract(epoch FROM now() - g.last_request)::float8,
       extract(epoch FROM now() - g.last_success_at)::float8,
       CASE WHEN g.next_allowed_at > now() THEN extract(epoch FROM g.next_allowed_at - now())::float8 ELSE 0 END,
       g.last_error,
       extract(epoch FROM now() - g.last_error_at)::float8,
       g.backlog
  FROM tributary.sources s
  JOIN tributary.cursors c ON c.source_id = s.id
  JOIN tributary.gates g ON g.source_id = s.id
 ORDER BY s.name
