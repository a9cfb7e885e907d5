-- A loader's turn at a source in two statements around the fetch, where it
-- took eight: one claim (lock, gate and cursor, DESIGN.md §5 steps 1-3) and
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
CREATE FUNCTION tributary.loader_claim(p_source int, p_lock_namespace int, p_lease_ms bigint,
                                       OUT decision text, OUT failures int, OUT drained boolean,
                                       OUT lease bigint, OUT empty_streak int, OUT cursor bigint)
LANGUAGE plpgsql AS $$
DECLARE
    locked boolean := false;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    BEGIN
        locked := pg_try_advisory_lock(p_lock_namespace, p_source);
        IF NOT locked THEN
            decision := 'locked';
            RETURN;
        END IF;
        -- The lease counts up, and never below the clock (in ms): a claim
        -- that a PostgreSQL crash forgot is not handed out again, so a close
        -- replayed under it cannot close a newer claim's slot.
        UPDATE tributary.gates g
           SET last_request = now(),
               next_allowed_at = now() + make_interval(secs => p_lease_ms::double precision / 1000),
               lease = greatest(g.lease + 1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
         WHERE g.source_id = p_source AND g.next_allowed_at <= now()
        RETURNING g.failures, g.drained, g.lease, g.empty_streak
             INTO failures, drained, lease, empty_streak;
        IF FOUND THEN
            decision := 'pass';
            SELECT c.last_event_id INTO cursor FROM tributary.cursors c WHERE c.source_id = p_source;
            RETURN;
        END IF;
        -- No row at all: the source was removed meanwhile; not due, for good.
        SELECT g.failures, g.drained, g.empty_streak INTO failures, drained, empty_streak
          FROM tributary.gates g WHERE g.source_id = p_source;
        decision := CASE WHEN coalesce(failures, 0) > 0 THEN 'backing_off' ELSE 'not_due' END;
        PERFORM pg_advisory_unlock(p_lock_namespace, p_source);
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

-- A good answer. A nudge that came while the request was in flight
-- (nudged_at after last_request) means "there is more": the next request
-- after the interval, not the idle pause, and the empty streak ends.
-- loader_gate_succeeded is the close itself, for loader_append to run inside
-- a batch's transaction (whose commit must stay synchronous).
CREATE FUNCTION tributary.loader_gate_succeeded(p_source int, p_lock_namespace int, p_lease bigint,
                                                p_pause_ms bigint, p_interval_ms bigint, p_drained boolean,
                                                p_backlog bigint)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE tributary.gates
       SET next_allowed_at = now() + make_interval(secs => (CASE WHEN nudged_at >= last_request
                                                                 THEN p_interval_ms ELSE p_pause_ms END)
                                                          ::double precision / 1000),
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

CREATE FUNCTION tributary.loader_close_succeeded(p_source int, p_lock_namespace int, p_lease bigint,
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
CREATE FUNCTION tributary.loader_close_failed(p_source int, p_lock_namespace int, p_lease bigint,
                                              p_delay_ms bigint, p_state text, p_error text)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE tributary.gates
       SET next_allowed_at = now() + make_interval(secs => p_delay_ms::double precision / 1000),
           failures = failures + 1, state = p_state, last_error = p_error, last_error_at = now(),
           drained = false, closed_lease = p_lease
     WHERE source_id = p_source AND lease = p_lease AND closed_lease <> p_lease;
    IF p_lock_namespace IS NOT NULL THEN
        PERFORM pg_advisory_unlock(p_lock_namespace, p_source);
    END IF;
END
$$;

-- An abandoned request (a stop, a stall): the next one after the interval;
-- failures and state stay as they were.
CREATE FUNCTION tributary.loader_close_released(p_source int, p_lock_namespace int, p_lease bigint,
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
CREATE FUNCTION tributary.loader_append(p_source int, p_expected bigint, p_ids bigint[], p_payloads jsonb,
                                        p_lock_namespace int, p_lease bigint, p_interval_ms bigint,
                                        p_backlog bigint)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    stored boolean := false;
BEGIN
    IF cardinality(p_ids) IS DISTINCT FROM jsonb_array_length(p_payloads) THEN
        RAISE EXCEPTION 'loader_append: % ids but % payloads', cardinality(p_ids), jsonb_array_length(p_payloads);
    END IF;
    BEGIN
        UPDATE tributary.cursors
           SET last_event_id = p_ids[cardinality(p_ids)], events_stored = events_stored + cardinality(p_ids),
               last_stored_at = now()
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
