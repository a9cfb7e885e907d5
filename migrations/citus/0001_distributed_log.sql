-- The log spread over a Citus cluster (issue 29; docs/citus.md): applied by
-- `migrate` on a Citus coordinator, after every migration of migrations/,
-- to an installation whose log is still empty.
--
-- Everything a loader's turn touches is distributed by source_id and
-- co-located with the events, so that a source's gate, cursor, keys and
-- events are on one worker and a turn is one transaction there. The
-- catalogue, read everywhere and written rarely, becomes reference tables (a
-- copy on every node). The consumer groups' tables stay on the coordinator
-- for now.
--
-- The order is the one that works (a probe, ../shared/citus/README.md):
-- 1. the triggers on sources go: Citus refuses to distribute a table with
--    triggers. Their work is done by `source add` and `source remove`
--    themselves (tributary.sources_changed, tributary.refuse_removing).
-- 2. the foreign keys to sources go before sources becomes a reference
--    table: else Citus turns the referencing tables into "Citus local"
--    tables by re-creating them, and functions of their row type are left
--    pointing at the old ones. They come back at the end, as foreign keys
--    from distributed tables to a reference table.
-- 3. the two views that read the log and the consumer groups go: Citus
--    will not distribute a table a view over a coordinator table depends on.
--    `migrate` makes them again with the definitions, right after this.
-- 4. what is unique must include the distribution column: the per-partition
--    unique index on seq goes (seq stays unique by its identity; on a worker
--    Citus starts each node's sequence at its group id << 48), and source_id
--    joins the primary keys of cursor_rewinds and source_edits.
-- 5. the log takes a trigger that stamps each event with its worker's
--    transaction id (events_stamp_worker_tx).
--
-- One DO block: Citus sends a DDL statement's whole query text on to the
-- workers, which refuse a text of several statements.
DO $$
DECLARE
    r record;
BEGIN
    -- One connection per node: foreign keys to a reference table are added in
    -- the same transaction as the distribution (Citus' hint).
    PERFORM set_config('citus.multi_shard_modify_mode', 'sequential', true);

    DROP TRIGGER IF EXISTS sources_keep_events ON tributary.sources;
    DROP TRIGGER IF EXISTS sources_forget_group_sources ON tributary.sources;

    ALTER TABLE tributary.cursors DROP CONSTRAINT cursors_source_id_fkey;
    ALTER TABLE tributary.gates DROP CONSTRAINT gates_source_id_fkey;
    ALTER TABLE tributary.cursor_rewinds DROP CONSTRAINT cursor_rewinds_source_id_fkey;
    ALTER TABLE tributary.source_edits DROP CONSTRAINT source_edits_source_id_fkey;
    ALTER TABLE tributary.source_errors DROP CONSTRAINT source_errors_source_id_fkey;
    ALTER TABLE tributary.access_tokens DROP CONSTRAINT access_tokens_source_id_fkey;

    DROP VIEW tributary.group_status, tributary.dead_letters;

    FOR r IN SELECT i.indexrelid::regclass AS index_name, c.conname, i.indrelid::regclass AS table_name
               FROM pg_index i
               JOIN pg_inherits h ON h.inhrelid = i.indrelid AND h.inhparent = 'tributary.events'::regclass
               LEFT JOIN pg_constraint c ON c.conindid = i.indexrelid
              WHERE i.indisunique AND i.indnatts = 1
                AND i.indkey[0] = (SELECT a.attnum FROM pg_attribute a
                                    WHERE a.attrelid = i.indrelid AND a.attname = 'seq')
    LOOP
        IF r.conname IS NOT NULL THEN
            EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', r.table_name, r.conname);
        ELSE
            EXECUTE format('DROP INDEX %s', r.index_name);
        END IF;
    END LOOP;
    ALTER TABLE tributary.cursor_rewinds DROP CONSTRAINT cursor_rewinds_pkey, ADD PRIMARY KEY (source_id, id);
    ALTER TABLE tributary.source_edits DROP CONSTRAINT source_edits_pkey, ADD PRIMARY KEY (source_id, id);

    PERFORM create_reference_table('tributary.sources');
    PERFORM create_reference_table('tributary.access_tokens');

    PERFORM create_distributed_table('tributary.events', 'source_id');
    PERFORM create_distributed_table(t, 'source_id', colocate_with => 'tributary.events')
      FROM unnest(ARRAY['tributary.event_keys', 'tributary.cursors', 'tributary.gates', 'tributary.cursor_rewinds',
                        'tributary.source_errors', 'tributary.source_edits', 'tributary.source_minutes']) AS t;

    -- Every event takes its worker's transaction id, wherever the statement
    -- that wrote it ran (sql/internal/05_distribution.sql says why). Citus
    -- calls triggers on distributed tables unsafe; this one only sets a
    -- column of its own row.
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    CREATE TRIGGER events_stamp_worker_tx BEFORE INSERT ON tributary.events
        FOR EACH ROW WHEN (NEW.tx_id IS DISTINCT FROM pg_current_xact_id())
        EXECUTE FUNCTION tributary.stamp_worker_tx();

    ALTER TABLE tributary.cursors
        ADD CONSTRAINT cursors_source_id_fkey FOREIGN KEY (source_id) REFERENCES tributary.sources (id) ON DELETE CASCADE;
    ALTER TABLE tributary.gates
        ADD CONSTRAINT gates_source_id_fkey FOREIGN KEY (source_id) REFERENCES tributary.sources (id) ON DELETE CASCADE;
    ALTER TABLE tributary.cursor_rewinds
        ADD CONSTRAINT cursor_rewinds_source_id_fkey FOREIGN KEY (source_id) REFERENCES tributary.sources (id)
            ON DELETE CASCADE;
    ALTER TABLE tributary.source_edits
        ADD CONSTRAINT source_edits_source_id_fkey FOREIGN KEY (source_id) REFERENCES tributary.sources (id)
            ON DELETE CASCADE;
    ALTER TABLE tributary.source_errors
        ADD CONSTRAINT source_errors_source_id_fkey FOREIGN KEY (source_id) REFERENCES tributary.sources (id)
            ON DELETE CASCADE;
    ALTER TABLE tributary.access_tokens
        ADD CONSTRAINT access_tokens_source_id_fkey FOREIGN KEY (source_id) REFERENCES tributary.sources (id)
            ON DELETE CASCADE;
END $$;
