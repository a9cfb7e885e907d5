-- The claim: lock, gate and cursor in one statement.
--
-- Internal (sql/internal/): the loader's own functions (docs/design.md §5): a
-- turn at a source is loader_claim, the fetch, then loader_append or one of
-- the loader_close_* (src/postgres/postgres_source_turn.cpp calls them).
-- Nothing else should call them: only tributary_loader may execute them
-- (sql/privileges/20_roles.sql). They run with the caller's rights; the
-- loader holds the table privileges they use anyway (it COPYs into events).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE. They were created by migration
-- 0006 until they moved here; 0006 stays as history.

-- A loader's turn at a source in two statements around the fetch, where it
-- took eight: one claim (lock, gate and cursor, docs/design.md §5 steps 1-3) and
-- one that stores a small batch and closes the slot (the gate's verdict, and
-- the lock released), or just closes it. They are the loader's own; nothing
-- else should call them.
--
-- The claim and the closes that store nothing commit asynchronously
-- (synchronous_commit off for their own transaction only): the gate row is
-- a schedule, not data, and waiting for its WAL flush cost more than
-- everything else in a small turn (bench/run many-small). What a PostgreSQL
-- crash can forget is the last fraction of a second of gate updates: see
-- README "How it works" for what that means for the schedule. A batch,
-- events and cursor and its close, always commits synchronously, and its
-- flush carries every gate update before it.

-- Lock, then gate: the slot is claimed only by the lock's holder, and the
-- cursor is read after both (a statement of its own, so with a snapshot that
-- sees every batch committed before the lock was taken). Unless the answer is
-- 'pass', the lock is not held when this returns, also when it fails (the
-- caller checks pg_locks after an error all the same: a cancel can land
-- after the block below).
--
-- The cursor is last_event_id for a source keyed by id (position NULL), else
-- its position and the records already taken there, and after a rewind the
-- ids that may be stored already (migration 0008). Those came later: a database whose loader_claim lacks them gets it anew (the
-- shape of a function's result cannot be replaced in place).
DO $$
BEGIN
    IF to_regprocedure('tributary.loader_claim(int, int, bigint)') IS NOT NULL
       AND NOT EXISTS (SELECT FROM pg_proc WHERE oid = to_regprocedure('tributary.loader_claim(int, int, bigint)')
                          AND 'replay_until' = ANY (proargnames)) THEN
        DROP FUNCTION tributary.loader_claim(int, int, bigint);
    END IF;
END $$;

-- p_revision: the source's revision (migration 0015) as the caller read it
-- with the settings it will ask with; NULL: not checked (the three-argument
-- form, for binaries from before `source edit`). Checked under the lock: a
-- `source edit` holds the same lock while it commits, so a claim that gets
-- the lock sees the edit. Settings older than the row's: decision
-- 'changed', nothing claimed (the caller reads the schedule again).
CREATE OR REPLACE FUNCTION tributary.loader_claim(p_source int, p_lock_namespace int, p_lease_ms bigint,
                                                  p_revision bigint,
                                                  OUT decision text, OUT failures int, OUT drained boolean,
                                                  OUT lease bigint, OUT empty_streak int, OUT cursor bigint,
                                                  OUT cursor_position text, OUT cursor_taken bigint,
                                                  OUT replay_until bigint)
LANGUAGE plpgsql AS $$
DECLARE
    locked boolean := false;
    -- Here, not in the UPDATE: Citus refuses volatile functions in an UPDATE
    -- of a distributed table (docs/citus.md).
    v_clock_ms bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    BEGIN
        -- NULL: the caller holds the lock already (on Citus, it takes it on
        -- the coordinator: sql/citus/10_delegation.sql).
        IF p_lock_namespace IS NOT NULL THEN
            locked := pg_try_advisory_lock(p_lock_namespace, p_source);
            IF NOT locked THEN
                decision := 'locked';
                RETURN;
            END IF;
        END IF;
        -- Nested, so that the query is planned only when a revision is
        -- given: the three-argument form also runs while migration 0013
        -- applies these definitions, before sources.revision exists.
        IF p_revision IS NOT NULL THEN
            IF NOT EXISTS (SELECT FROM tributary.sources s WHERE s.id = p_source AND s.revision = p_revision) THEN
                decision := 'changed';
                IF locked THEN
                    PERFORM pg_advisory_unlock(p_lock_namespace, p_source);
                END IF;
                RETURN;
            END IF;
        END IF;
        -- The lease counts up, and never below the clock (in ms): a claim
        -- that a PostgreSQL crash forgot is not handed out again, so a close
        -- replayed under it cannot close a newer claim's slot.
        UPDATE tributary.gates g
           SET last_request = now(),
               next_allowed_at = now() + make_interval(secs => p_lease_ms::double precision / 1000),
               lease = greatest(g.lease + 1, v_clock_ms)
         WHERE g.source_id = p_source AND g.next_allowed_at <= now()
        RETURNING g.failures, g.drained, g.lease, g.empty_streak
             INTO failures, drained, lease, empty_streak;
        IF FOUND THEN
            decision := 'pass';
            SELECT c.last_event_id, c.position, c.taken, c.replay_until INTO cursor, cursor_position, cursor_taken, replay_until
              FROM tributary.cursors c WHERE c.source_id = p_source;
            RETURN;
        END IF;
        -- No row at all: the source was removed meanwhile; not due, for good.
        SELECT g.failures, g.drained, g.empty_streak INTO failures, drained, empty_streak
          FROM tributary.gates g WHERE g.source_id = p_source;
        decision := CASE WHEN coalesce(failures, 0) > 0 THEN 'backing_off' ELSE 'not_due' END;
        IF locked THEN
            PERFORM pg_advisory_unlock(p_lock_namespace, p_source);
        END IF;
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        -- A session lock outlives the statement that took it: never keep
        -- one the caller does not know it holds.
        IF locked THEN
            PERFORM pg_advisory_unlock(p_lock_namespace, p_source);
        END IF;
        RAISE;
    END;
END
$$;

-- The three closes. Each applies once per lease (closed_lease), and then
-- lets the lock go when p_lock_namespace is given (NULL: the lock died with
-- an earlier session). The lock goes last: a close that fails keeps it, as
-- the caller's bookkeeping expects, and from the UPDATE on, the gate row's
-- lock (held to the commit) keeps anyone who takes the advisory lock from
-- claiming the slot before the close is visible.

-- The claim as binaries from before `source edit` (migration 0015) call it:
-- the revision is not checked.
CREATE OR REPLACE FUNCTION tributary.loader_claim(p_source int, p_lock_namespace int, p_lease_ms bigint,
                                                  OUT decision text, OUT failures int, OUT drained boolean,
                                                  OUT lease bigint, OUT empty_streak int, OUT cursor bigint,
                                                  OUT cursor_position text, OUT cursor_taken bigint,
                                                  OUT replay_until bigint)
LANGUAGE sql AS $$
SELECT * FROM tributary.loader_claim(p_source, p_lock_namespace, p_lease_ms, NULL::bigint)
$$;
