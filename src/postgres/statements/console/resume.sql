-- POST /api/sources/NAME/resume (sql/api/94_console_actions.sql).
SELECT tributary.console_resume($1)::text
