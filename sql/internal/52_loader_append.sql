-- A small batch and the close of its slot, in one statement.
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



-- A batch of a source keyed by text (every style but after-id), the move of
-- its cursor and the close of its slot, in one statement. The compare-and-set
-- on the position first; then the records in page order, each one skipped
-- when the source already has its key: a page served again (a time style's
-- lookback, the last page of a stream asked again, a token replayed after a
-- crash) stores nothing twice and is no error. Returns how many records were
-- skipped, or NULL when the cursor was not at the expected position: nothing
-- stored. Either way the slot is closed as a success, no request before
-- p_pause_ms (the interval, or longer when the source's rate limit is spent;
-- a nudge does not shorten it). The batch may be empty: the cursor alone
-- moves (a page of records all seen before, a token to the next page).
-- A batch of records all stored already that leaves the cursor where it was
-- is nothing new (a time source's last record, asked again since its
-- watermark): the slot closes as drained, after p_idle_pause_ms, as an empty
-- answer's does. Keys arrive as a JSON array of strings (no array-literal
-- quoting to get wrong). Commits synchronously and lets the lock go last, as loader_append.
CREATE OR REPLACE FUNCTION tributary.loader_append_keyed(p_source int, p_expected text, p_expected_taken bigint,
                                                         p_next text, p_next_taken bigint, p_keys jsonb,
                                                         p_payloads jsonb, p_lock_namespace int, p_lease bigint,
                                                         p_pause_ms bigint, p_drained boolean, p_backlog bigint,
                                                         p_idle_pause_ms bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_count bigint := jsonb_array_length(p_keys);
    v_stored bigint := 0;
    v_skipped bigint;
    -- A variable, not now() in the UPDATE's CASE: Citus refuses that
    -- (docs/citus.md).
    v_now timestamptz := now();
BEGIN
    IF v_count IS DISTINCT FROM jsonb_array_length(p_payloads) THEN
        RAISE EXCEPTION 'loader_append_keyed: % keys but % payloads', v_count, jsonb_array_length(p_payloads);
    END IF;
    PERFORM FROM tributary.cursors
      WHERE source_id = p_source AND position = p_expected AND taken = p_expected_taken
        FOR NO KEY UPDATE;
    IF FOUND THEN
        WITH input AS (
            SELECT b.key, b.payload, b.n
              FROM ROWS FROM (jsonb_array_elements_text(p_keys), jsonb_array_elements(p_payloads))
                   WITH ORDINALITY AS b(key, payload, n)
        ), new_keys AS (
            INSERT INTO tributary.event_keys (source_id, event_key)
            SELECT p_source, i.key FROM input i ORDER BY i.n
                ON CONFLICT DO NOTHING
            RETURNING event_key
        )
        INSERT INTO tributary.events (source_id, event_key, payload)
        SELECT p_source, f.key, f.payload
          FROM (SELECT DISTINCT ON (i.key) i.key, i.payload, i.n FROM input i ORDER BY i.key, i.n) f
          JOIN new_keys k ON k.event_key = f.key
         ORDER BY f.n;
        GET DIAGNOSTICS v_stored = ROW_COUNT;
        UPDATE tributary.cursors
           SET position = p_next, taken = p_next_taken, events_stored = events_stored + v_stored,
               last_stored_at = CASE WHEN v_stored > 0 THEN v_now ELSE last_stored_at END
         WHERE source_id = p_source;
        v_skipped := v_count - v_stored;
    END IF;
    IF v_stored = 0 AND p_next = p_expected AND p_next_taken = p_expected_taken THEN
        -- Nothing new after all (every record known, the cursor where it
        -- was): closed as an empty answer is, with the idle pause.
        PERFORM tributary.loader_gate_succeeded(p_source, p_lock_namespace, p_lease, p_idle_pause_ms, p_pause_ms,
                                                true, p_backlog);
    ELSE
        PERFORM tributary.loader_gate_succeeded(p_source, p_lock_namespace, p_lease, p_pause_ms, p_pause_ms,
                                                p_drained, p_backlog);
    END IF;
    RETURN v_skipped;
END
$$;

-- A batch of a source keyed by id after `source rewind`: as loader_append,
-- but ids the source already has are skipped, not refused, while they lie
-- at or below the cursor's replay_until (the cursor before the rewind); the
-- cursor passing it ends the replay. Called only once a batch was refused
-- for its ids (loader_append, COPY) and the cursor has a replay_until: the
-- usual path pays nothing for this. Returns the ids skipped, or NULL when the
-- cursor was not at p_expected, or an id above replay_until is stored
-- already (another writer): nothing stored. Closes the slot either way.
CREATE OR REPLACE FUNCTION tributary.loader_append_replay(p_source int, p_expected bigint, p_ids bigint[],
                                                          p_payloads jsonb, p_lock_namespace int, p_lease bigint,
                                                          p_interval_ms bigint, p_backlog bigint)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_count bigint := coalesce(cardinality(p_ids), 0);
    -- Not a subscript of the parameter in the UPDATE (loader_append says why).
    v_last bigint := p_ids[v_count];
    v_until bigint;
    v_stored bigint := 0;
    v_new bigint := 0;
    v_skipped bigint;
BEGIN
    IF v_count IS DISTINCT FROM jsonb_array_length(p_payloads) THEN
        RAISE EXCEPTION 'loader_append_replay: % ids but % payloads', v_count, jsonb_array_length(p_payloads);
    END IF;
    SELECT c.replay_until INTO v_until FROM tributary.cursors c
     WHERE c.source_id = p_source AND c.last_event_id = p_expected FOR NO KEY UPDATE;
    IF FOUND AND v_until IS NOT NULL THEN
        BEGIN
            -- Ids increase within a batch: the replayed ones come first.
            -- Every partition is asked (each has its own index on the key):
            -- a replay is rare, and the ids may be anywhere in the log.
            INSERT INTO tributary.events (source_id, event_id, payload)
            SELECT p_source, b.id, b.payload
              FROM ROWS FROM (unnest(p_ids), jsonb_array_elements(p_payloads)) WITH ORDINALITY AS b(id, payload, n)
             WHERE b.id <= v_until
               AND NOT EXISTS (SELECT 1 FROM tributary.events e WHERE e.source_id = p_source AND e.event_id = b.id)
             ORDER BY b.n;
            GET DIAGNOSTICS v_stored = ROW_COUNT;
            INSERT INTO tributary.events (source_id, event_id, payload)
            SELECT p_source, b.id, b.payload
              FROM ROWS FROM (unnest(p_ids), jsonb_array_elements(p_payloads)) WITH ORDINALITY AS b(id, payload, n)
             WHERE b.id > v_until
             ORDER BY b.n;
            GET DIAGNOSTICS v_new = ROW_COUNT;
            v_stored := v_stored + v_new;
            v_skipped := v_count - v_stored;
            UPDATE tributary.cursors
               SET last_event_id = v_last, events_stored = events_stored + v_stored,
                   last_stored_at = now(),
                   replay_until = CASE WHEN v_last >= v_until THEN NULL ELSE v_until END
             WHERE source_id = p_source;
        EXCEPTION WHEN unique_violation THEN
            v_skipped := NULL;  -- an id past the replay is stored: rolled back, nothing stored
        END;
    END IF;
    PERFORM tributary.loader_gate_succeeded(p_source, p_lock_namespace, p_lease, p_interval_ms, p_interval_ms,
                                            false, p_backlog);
    RETURN v_skipped;
END
$$;
