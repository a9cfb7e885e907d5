-- After a source was added or removed: the groups' cached matches cleared
-- (sql/internal/60_source_triggers.sql), where no trigger on tributary.sources does it: on
-- Citus, whose tables have none (migrations/citus/0001).
SELECT tributary.sources_changed()
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_trigger t
                    WHERE t.tgrelid = 'tributary.sources'::regclass AND t.tgname = 'sources_forget_group_sources')
