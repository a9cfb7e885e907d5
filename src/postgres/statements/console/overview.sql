-- GET /api/overview (sql/api/90_console_overview.sql).
SELECT tributary.console_overview()::text
