-- Consumer $2 of group $1 stops: the lanes it holds go to the others at once; how many
-- (api/43_consumer_leave.sql).
SELECT tributary.consumer_leave($1, $2)
