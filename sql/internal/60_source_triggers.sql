-- Triggers on tributary.sources (the triggers themselves are created by the
-- migrations; their functions live here).
--
-- Internal (sql/internal/): nothing calls these but PostgreSQL.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE. Created by migration 0005 until it
-- moved here; 0005 stays as history.

-- Keeps what the foreign key events.source_id -> sources protected (0005
-- dropped it for the cost of its per-row lock): a source with events cannot
-- be deleted (tributary never deletes events).
-- Called by: the trigger sources_keep_events (BEFORE DELETE ON tributary.sources).
CREATE OR REPLACE FUNCTION tributary.refuse_deleting_a_source_with_events() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM tributary.refuse_removing(OLD.id, OLD.name);
    RETURN OLD;
END $$;

-- The check itself, also called by `source remove` before its DELETE where
-- the trigger is gone: on Citus, whose tables have no triggers
-- (migrations/citus/0001).
-- Called by: refuse_deleting_a_source_with_events, `source remove`
-- (src/postgres/statements/source_registry/check_removal.sql).
CREATE OR REPLACE FUNCTION tributary.refuse_removing(p_id int, p_name text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- Wait for a batch being stored right now: it moves the cursor row
    -- first, in its own transaction; once it is done, its events are seen.
    PERFORM 1 FROM tributary.cursors WHERE source_id = p_id FOR UPDATE;
    -- And for the transactions publishing to it (api/80_publish.sql) or a
    -- receiver's group commit storing to it (internal/70_receiver_store.sql):
    -- in READ COMMITTED they hold its publish lock shared until they end (in
    -- REPEATABLE READ a KEY SHARE lock on the row, which the DELETE waits
    -- for); one that comes after this lock finds the row gone.
    PERFORM pg_advisory_xact_lock(1953655138, -p_id);
    IF EXISTS (SELECT 1 FROM tributary.events WHERE source_id = p_id) THEN
        RAISE EXCEPTION 'source "%" has stored events, and tributary never deletes events', p_name
            USING ERRCODE = '23503', HINT = 'Pause it instead: tributary source pause ' || p_name;
    END IF;
END $$;

-- The key of the group-sources lock (see forget_group_sources): the
-- one-bigint form of advisory lock, which never meets the two-int locks of
-- src/postgres/advisory_keys.h (pg_locks.objsubid 1, not 2); "tribgrps".
-- Called by: forget_group_sources, group_create.
CREATE OR REPLACE FUNCTION tributary.group_sources_lock_key() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 8390884927107919987 $$;

-- A source added, removed or renamed: the sources each group matches, as
-- its fresh reads keep them (consumer_groups.source_bits, migration 0011),
-- may be out of date; they are cleared in every group, in the transaction
-- that changes the sources. Every group row, whether cleared already or
-- not: the update waits for a read that holds a group's row locked, and a
-- read that locks the row after waits for this transaction, so no read can
-- keep matches computed without a source whose events it could see (see
-- lease_fresh). Runs as the owner: whoever may change the sources need not
-- be able to write the groups.
-- A group created meanwhile is a row this UPDATE cannot see, and its first
-- read could not see this transaction's source: so a change of the sources
-- and group_create queue, on the group-sources lock (group_sources_lock_key),
-- taken shared here (source changes do not wait for each other) and
-- exclusive by group_create. Whichever comes second sees the other committed:
-- this UPDATE (a new statement, so a new snapshot once the lock is granted)
-- clears the new group, or the new group's first read sees the source.
-- Called by: the trigger sources_forget_group_sources (AFTER INSERT, DELETE,
-- TRUNCATE or UPDATE OF name ON tributary.sources, once per statement).
CREATE OR REPLACE FUNCTION tributary.forget_group_sources() RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM tributary.sources_changed();
    RETURN NULL;
END $$;

-- The work itself, also called by `source add` and `source remove` after
-- their change where the trigger is gone: on Citus, whose tables have no
-- triggers (migrations/citus/0001).
-- Called by: forget_group_sources, `source add` and `source remove`
-- (src/postgres/statements/source_registry/sources_changed.sql).
CREATE OR REPLACE FUNCTION tributary.sources_changed() RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(tributary.group_sources_lock_key());
    UPDATE tributary.consumer_groups SET source_bits = NULL;
    -- And every lane's (migration 0017): a lane's read holds its lane's row.
    IF tributary.lanes_in_place() THEN
        UPDATE tributary.group_lanes SET source_bits = NULL;
    END IF;
END $$;
