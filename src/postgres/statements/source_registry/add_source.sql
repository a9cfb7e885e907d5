-- $3: the headers, newline-separated; $7: how it is read (postgres/source_reading.h).
INSERT INTO tributary.sources (name, url, headers, interval_ms, batch_size, timeout_ms, reading)
VALUES ($1, $2, string_to_array($3, E'\n'), $4, $5, $6, $7::jsonb)
RETURNING id
