-- A batch for consumer $2 of group $1, at most $3 events (api/40_consumer_read.sql).
SELECT batch_id, lease_token::text, delivery, seq, source, event_id, event_key, payload::text
  FROM tributary.consumer_read($1, $2, $3)
