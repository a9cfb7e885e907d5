-- Whether consumer $2 of group $1, having found nothing, has lanes coming to it
-- (api/44_consumer_awaits_lanes.sql).
SELECT tributary.consumer_awaits_lanes($1, $2)
