-- POST /api/sources/NAME/pause (sql/api/94_console_actions.sql).
SELECT tributary.console_pause($1)::text
