-- Whether the log is spread over a Citus cluster (docs/citus.md): the few
-- things that differ there ask this.
--
-- Internal (sql/internal/): steps of the public functions and the loader's
-- own functions. Nothing outside tributary should call them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- True once migrations/citus/0001 distributed the log. Plain PostgreSQL has
-- no Citus catalogue (the query below is planned only when it exists).
-- Called by: attach_new_partition, the files of sql/citus, the loader
-- (src/postgres/postgres_source_turn.cpp).
CREATE OR REPLACE FUNCTION tributary.log_is_distributed() RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NULL THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT FROM pg_catalog.pg_dist_partition p WHERE p.logicalrelid = 'tributary.events'::regclass);
END $$;

-- On Citus, every event carries the transaction id of the worker that holds
-- it, the one its consumers read by (docs/citus.md). A statement run on the
-- coordinator (publish, a receiver's group commit) has its defaults filled
-- there, with the coordinator's id, which also chose the partition the row
-- was sent to. This trigger (events_stamp_worker_tx, migrations/citus/0001)
-- runs on the worker, in the leaf shard the row reached: it writes the row
-- again with the worker's own id, through the shard of the whole log (so
-- that it lands in the partition of that id), and drops the original.
-- Its WHEN clause lets the rows through that have the worker's id already:
-- the loader's, whose calls run on the worker, and its own second write.
-- The worker's id is what makes a two-phase commit safe for readers too:
-- the prepared transaction holds the worker's snapshots back until COMMIT
-- PREPARED, whatever the coordinator has done meanwhile.
-- A row dropped here is not counted by the statement that wrote it: the
-- writers count what they stored otherwise (api/80_publish.sql).
-- Called by: the trigger events_stamp_worker_tx (Citus only).
CREATE OR REPLACE FUNCTION tributary.stamp_worker_tx() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    v_log_shard regclass;
BEGIN
    SELECT i.inhparent INTO v_log_shard FROM pg_catalog.pg_inherits i WHERE i.inhrelid = TG_RELID;
    NEW.tx_id := pg_current_xact_id();
    EXECUTE format('INSERT INTO %s SELECT ($1).*', v_log_shard) USING NEW;
    RETURN NULL;
END $$;
