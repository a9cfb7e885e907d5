-- POST /api/sources/NAME/nudge (sql/api/94_console_actions.sql).
SELECT tributary.console_nudge($1)::text
