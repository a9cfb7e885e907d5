-- One group ($1) or every group (NULL).
SELECT name, pattern, ordered, max_deliveries, (extract(epoch FROM lease) * 1000)::bigint,
       events_behind, extract(epoch FROM oldest_unprocessed_age)::float8,
       batches_in_flight, retries_waiting, dead_letters
  FROM tributary.group_status
 WHERE $1::text IS NULL OR name = $1
 ORDER BY name
