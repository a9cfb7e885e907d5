-- Before GET /api/overview, /api/groups (name NULL) and /api/groups/NAME: the groups' matches
-- kept where a change to the sources cleared them (sql/api/93_console_groups.sql).
SELECT tributary.console_keep_group_matches($1)
