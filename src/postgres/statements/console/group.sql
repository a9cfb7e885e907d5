-- GET /api/groups/NAME: name, limit, offset (sql/api/93_console_groups.sql).
SELECT tributary.console_group($1, $2, $3)::text
