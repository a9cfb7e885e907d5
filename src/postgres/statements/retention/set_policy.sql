-- $2: an interval in milliseconds or NULL; $3: bytes or NULL.
SELECT tributary.retention_set($1, $2::interval, $3::bigint, $4, $5)
