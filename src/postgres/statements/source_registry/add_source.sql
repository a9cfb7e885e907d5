-- $3: the headers, newline-separated.
INSERT INTO tributary.sources (name, url, headers, interval_ms, batch_size, timeout_ms)
VALUES ($1, $2, string_to_array($3, E'\n'), $4, $5, $6)
RETURNING id
