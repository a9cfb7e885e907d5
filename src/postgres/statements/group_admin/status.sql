-- One group ($1) or every group (NULL): the rows of the view tributary.group_status. An age is
-- never negative (an event loaded after this statement's now()).
SELECT name, pattern, ordered, max_deliveries, (extract(epoch FROM lease) * 1000)::bigint,
       events_behind, greatest(extract(epoch FROM oldest_unprocessed_age)::float8, 0),
       batches_in_flight, retries_waiting, dead_letters, lanes, unheld_lanes
  FROM tributary.group_status_of($1::text)
 ORDER BY name
