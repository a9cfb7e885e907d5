-- GET /api/sources/NAME (sql/api/92_console_source.sql).
SELECT tributary.console_source($1)::text
