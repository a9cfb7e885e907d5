-- GET /api/groups (sql/api/93_console_groups.sql).
SELECT tributary.console_groups()::text
