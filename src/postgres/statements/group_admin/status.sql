-- One group ($1) or every group (NULL). An age is never negative (an event loaded after this
-- statement's now()).
SELECT name, pattern, ordered, max_deliveries, (extract(epoch FROM lease) * 1000)::bigint,
       events_behind, greatest(extract(epoch FROM oldest_unprocessed_age)::float8, 0),
       batches_in_flight, retries_waiting, dead_letters, lanes, unheld_lanes
  FROM tributary.group_status
 WHERE $1::text IS NULL OR name = $1
 ORDER BY name
