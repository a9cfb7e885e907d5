-- The closes of a slot that store nothing: success, failure, release.
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

-- A good answer. A nudge that came while the request was in flight
-- (nudged_at after last_request) means "there is more": the next request
-- after the interval, not the idle pause, and the empty streak ends.
-- loader_gate_succeeded is the close itself, for loader_append to run inside
-- a batch's transaction (whose commit must stay synchronous).
CREATE OR REPLACE FUNCTION tributary.loader_gate_succeeded(p_source int, p_lock_namespace int, p_lease bigint,
                                                           p_pause_ms bigint, p_interval_ms bigint, p_drained boolean,
                                                           p_backlog bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    -- Both times here, not in the UPDATE: Citus refuses a stable function
    -- (timestamptz + interval is one) of a column in an UPDATE of a
    -- distributed table (docs/citus.md).
    v_after_interval timestamptz := now() + make_interval(secs => p_interval_ms::double precision / 1000);
    v_after_pause timestamptz := now() + make_interval(secs => p_pause_ms::double precision / 1000);
BEGIN
    UPDATE tributary.gates
       SET next_allowed_at = CASE WHEN nudged_at >= last_request THEN v_after_interval ELSE v_after_pause END,
           last_success_at = now(), failures = 0, state = 'ok', drained = p_drained,
           empty_streak = CASE WHEN p_drained AND NOT coalesce(nudged_at >= last_request, false)
                               THEN empty_streak + 1 ELSE 0 END,
           backlog = p_backlog, closed_lease = p_lease
     WHERE source_id = p_source AND lease = p_lease AND closed_lease <> p_lease;
    IF p_lock_namespace IS NOT NULL THEN
        PERFORM pg_advisory_unlock(p_lock_namespace, p_source);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION tributary.loader_close_succeeded(p_source int, p_lock_namespace int, p_lease bigint,
                                                            p_pause_ms bigint, p_interval_ms bigint, p_drained boolean,
                                                            p_backlog bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    PERFORM tributary.loader_gate_succeeded(p_source, p_lock_namespace, p_lease, p_pause_ms, p_interval_ms,
                                            p_drained, p_backlog);
END
$$;

-- A failed request, or a batch PostgreSQL refused: no request for p_delay_ms.
-- The gate's update and the source's error episode (tributary.source_errors,
-- for the console) in one transaction: only a close that matched the gate
-- (not a replayed one) records, under the gate's lease, so one source's
-- closes never race. The same text as the newest episode, with no success
-- since it was last seen, counts in it; anything else starts a new one, and
-- the oldest beyond 20 leave. Statement by statement, each on the source's
-- rows alone: Citus runs each as one on the source's shard (docs/citus.md).
CREATE OR REPLACE FUNCTION tributary.loader_close_failed(p_source int, p_lock_namespace int, p_lease bigint,
                                                         p_delay_ms bigint, p_state text, p_error text)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_error text := coalesce(p_error, '');
    v_last_success timestamptz;
    v_newest record;  -- not the table's row type: these definitions come before migration 0014 makes it
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE tributary.gates
       SET next_allowed_at = now() + make_interval(secs => p_delay_ms::double precision / 1000),
           failures = failures + 1, state = p_state, last_error = p_error, last_error_at = now(),
           drained = false, closed_lease = p_lease
     WHERE source_id = p_source AND lease = p_lease AND closed_lease <> p_lease
    RETURNING last_success_at INTO v_last_success;
    IF FOUND THEN
        SELECT e.id, e.error, e.last_at INTO v_newest FROM tributary.source_errors e
         WHERE e.source_id = p_source ORDER BY e.id DESC LIMIT 1;
        IF FOUND AND v_newest.error = v_error AND v_newest.last_at >= coalesce(v_last_success, '-infinity') THEN
            UPDATE tributary.source_errors e SET last_at = now(), count = e.count + 1
             WHERE e.source_id = p_source AND e.id = v_newest.id;
        ELSE
            INSERT INTO tributary.source_errors (source_id, first_at, last_at, count, error)
            VALUES (p_source, now(), now(), 1, v_error);
            DELETE FROM tributary.source_errors e
             WHERE e.source_id = p_source
               AND e.id < (SELECT min(k.id) FROM (SELECT k.id FROM tributary.source_errors k
                                                   WHERE k.source_id = p_source ORDER BY k.id DESC LIMIT 20) k);
        END IF;
    END IF;
    IF p_lock_namespace IS NOT NULL THEN
        PERFORM pg_advisory_unlock(p_lock_namespace, p_source);
    END IF;
END
$$;

-- An abandoned request (a stop, a stall): the next one after the interval;
-- failures and state stay as they were.
CREATE OR REPLACE FUNCTION tributary.loader_close_released(p_source int, p_lock_namespace int, p_lease bigint,
                                                           p_interval_ms bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE tributary.gates
       SET next_allowed_at = now() + make_interval(secs => p_interval_ms::double precision / 1000),
           closed_lease = p_lease
     WHERE source_id = p_source AND lease = p_lease AND closed_lease <> p_lease;
    IF p_lock_namespace IS NOT NULL THEN
        PERFORM pg_advisory_unlock(p_lock_namespace, p_source);
    END IF;
END
$$;

-- A small batch, and the close of its slot, in one statement: where COPY
-- would take five round trips (BEGIN, the cursor's compare-and-set, COPY,
-- COMMIT, then the close) for a few rows. The compare-and-set first, as with
-- COPY, then the rows in id order; payloads arrive as one JSON array, the
-- sources' own texts joined, never re-encoded. Returns false when the cursor
-- was not at p_expected or another writer stored these ids first: nothing
-- of the batch is stored. Either way the slot is closed as a success, with
-- the interval as its pause, in the same transaction, which commits
-- synchronously, as every batch does. The lock goes last, just before the
-- commit; the gate row's lock, held until the commit, keeps anyone from
-- claiming the source in between. On an error (a payload PostgreSQL refuses)
-- nothing happens at all and the lock is kept: the caller closes the slot as
-- a failure.
CREATE OR REPLACE FUNCTION tributary.loader_append(p_source int, p_expected bigint, p_ids bigint[], p_payloads jsonb,
                                                   p_lock_namespace int, p_lease bigint, p_interval_ms bigint,
                                                   p_backlog bigint)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    stored boolean := false;
    -- A variable, not a subscript of the parameter in the UPDATE: that
    -- statement shape crashes Citus 13.2's coordinator (docs/citus.md).
    v_last bigint := p_ids[cardinality(p_ids)];
BEGIN
    IF cardinality(p_ids) IS DISTINCT FROM jsonb_array_length(p_payloads) THEN
        RAISE EXCEPTION 'loader_append: % ids but % payloads', cardinality(p_ids), jsonb_array_length(p_payloads);
    END IF;
    BEGIN
        UPDATE tributary.cursors
           SET last_event_id = v_last, events_stored = events_stored + cardinality(p_ids), last_stored_at = now()
         WHERE source_id = p_source AND last_event_id = p_expected;
        IF FOUND THEN
            INSERT INTO tributary.events (source_id, event_id, payload)
            SELECT p_source, b.id, b.payload
              FROM ROWS FROM (unnest(p_ids), jsonb_array_elements(p_payloads)) WITH ORDINALITY AS b(id, payload, n)
             ORDER BY b.n;
            stored := true;
        END IF;
    EXCEPTION WHEN unique_violation THEN
        stored := false;  -- rolled back to the block's start: the cursor is untouched too
    END;
    PERFORM tributary.loader_gate_succeeded(p_source, p_lock_namespace, p_lease, p_interval_ms, p_interval_ms,
                                            false, p_backlog);
    RETURN stored;
END
$$;
