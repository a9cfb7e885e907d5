-- POST /api/groups/NAME/reset: group, to (sql/api/94_console_actions.sql).
SELECT tributary.console_reset($1, $2)::text
