-- A batch of a source keyed by id replayed after a rewind (internal/52_loader_append.sql).
SELECT tributary.loader_append_replay($1, $2, $3::bigint[], $4::jsonb, $5, $6, $7, $8)
