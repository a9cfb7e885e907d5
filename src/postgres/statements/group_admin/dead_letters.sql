SELECT seq, source, event_id, event_key, payload::text, deliveries, last_error, failed_at::text
  FROM tributary.dead_letters
 WHERE group_name = $1
 ORDER BY seq
