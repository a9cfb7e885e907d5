-- POST /api/groups/NAME/replay: group, seq or NULL for all (sql/api/94_console_actions.sql).
SELECT tributary.console_replay($1, $2)::text
