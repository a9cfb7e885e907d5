-- After a source was added or removed: the groups' cached matches cleared
-- (sql/internal/60_source_triggers.sql; on one PostgreSQL a trigger repeats it).
SELECT tributary.sources_changed()
