-- $1 kind, $2 name, $3 url (NULL unless pulled); $4: the headers, newline-separated; $8: how it is read
-- (postgres/source_reading.h); $9: how it is received (postgres/source_receiving.h); $10: its publishers,
-- newline-separated.
INSERT INTO tributary.sources (kind, name, url, headers, interval_ms, batch_size, timeout_ms, reading, receiving,
                               publishers)
VALUES ($1, $2, $3, string_to_array($4, E'\n'), $5, $6, $7, $8::jsonb, $9::jsonb, string_to_array($10, E'\n'))
RETURNING id
