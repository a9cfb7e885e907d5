-- Acks batch $4 (delivery $5) when given, then a batch for consumer $2 of group $1, at most $3
-- events, the events as one JSON array (api/42_consumer_next.sql).
SELECT batch_id, lease_token::text, delivery, events::text, previous_acked
  FROM tributary.consumer_next($1, $2, $3, $4, $5::uuid)
