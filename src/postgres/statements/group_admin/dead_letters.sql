-- The rows of the view tributary.dead_letters of group $1.
SELECT seq, source, event_id, event_key, payload::text, deliveries, last_error, failed_at::text
  FROM tributary.dead_letters_of($1)
 ORDER BY seq
