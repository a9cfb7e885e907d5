-- The lanes of group $1 (none for a group of one lane), as tributary.group_lanes_status gives them
-- (api/61_group_lanes_status.sql). An age is never negative.
SELECT lane, holder, events_behind, greatest(extract(epoch FROM oldest_unprocessed_age)::float8, 0),
       batches_in_flight, retries_waiting
  FROM tributary.group_lanes_status($1)
