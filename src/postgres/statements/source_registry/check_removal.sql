-- Refuses (23503) removing source $1 (named $2) when it has stored events, having waited for
-- whoever is storing to it (sql/internal/60_source_triggers.sql), where no trigger on
-- tributary.sources does it: on Citus, whose tables have none (migrations/citus/0001).
SELECT tributary.refuse_removing($1, $2)
 WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_trigger t
                    WHERE t.tgrelid = 'tributary.sources'::regclass AND t.tgname = 'sources_keep_events')
