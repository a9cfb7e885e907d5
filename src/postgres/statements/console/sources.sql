-- GET /api/sources: pattern, state, sort, descending, limit, offset (sql/api/91_console_sources.sql).
SELECT tributary.console_sources($1, $2, $3, $4, $5, $6)::text
