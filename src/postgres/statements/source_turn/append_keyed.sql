-- A batch of a source keyed by text, its cursor and its close (internal/52_loader_append.sql).
SELECT tributary.loader_append_keyed($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10, $11, $12, $13)
