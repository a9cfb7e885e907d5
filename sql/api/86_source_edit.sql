-- `tributary source edit` (issue 26; docs/sources.md "Editing a source"):
-- a pulled source's settings changed in place, with the rules that keep its
-- log exactly once, recorded in tributary.source_edits (migration 0015).
--
-- Public API (sql/api/): the admin's role executes it (sql/privileges/20_roles.sql).
-- It runs as its owner (SECURITY DEFINER; search_path pinned to pg_catalog,
-- so every name of ours is written tributary.x). Errors a caller can fix
-- carry SQLSTATE 22023 (a change refused, or one that needs a rewind given
-- without), P0002 (no such source), 55P03 (a turn held the source too long).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- How a change to one setting of a pulled source bears on its cursor:
-- 'keep' (the cursor means what it meant), 'rewind' (it means something else
-- now: the change needs a new cursor), 'refuse' (events stored already would
-- no longer be recognised: never). p_setting is a column (url, headers,
-- interval_ms, batch_size, timeout_ms) or a member of the reading document
-- (postgres/source_reading.cpp); a member this function does not know
-- needs a rewind, to be safe. p_style: the style after the change;
-- p_stored: the events the source has stored; p_taken: the records of the
-- cursor's page already taken; p_batch_size: the batch size after the change.
-- Called by: source_edit.
CREATE OR REPLACE FUNCTION tributary.source_edit_effect(p_setting text, p_style text, p_stored bigint,
                                                        p_taken bigint, p_batch_size int)
RETURNS text LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp AS $$
SELECT CASE
    -- Events stored are known by their key: another key would store them again.
    WHEN p_setting = 'key' THEN CASE WHEN p_stored > 0 THEN 'refuse' ELSE 'keep' END
    -- Page numbers count pages of `limit` records: another size moves every page.
    WHEN p_setting IN ('batch_size', 'limit_param') AND p_style = 'page' THEN 'rewind'
    -- Records of the cursor's page already taken: a smaller page may not hold them.
    WHEN p_setting = 'batch_size' THEN CASE WHEN p_taken > p_batch_size THEN 'rewind' ELSE 'keep' END
    WHEN p_setting IN ('url', 'headers', 'interval_ms', 'timeout_ms', 'payload', 'limit_param', 'params',
                       'has_more', 'end_of_stream', 'lookback_s', 'allow_redirect_host', 'auth',
                       -- The cursor is still the last record read; the page at it holds it again or not.
                       'inclusive') THEN 'keep'
    -- records, newest_first, paginate, cursor_param, next, time_field, first_page, and anything newer.
    ELSE 'rewind'
END $$;

-- A URL as the record of an edit shows it: without user info or query
-- (either may hold a credential; "?..." says there was a query).
-- Called by: source_edit.
CREATE OR REPLACE FUNCTION tributary.source_edit_shown_url(p_url text) RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp AS $$
SELECT regexp_replace(regexp_replace(p_url, '^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@]*@', '\1'), '[?#].*$', '?...')
$$;

-- Changes source p_name's settings to these (all of them, as `source add`
-- would store them: the CLI merges the flags given into the source's
-- current settings) and, with p_rewind_to, moves its cursor there (an id for
-- a source read by id, else a position; "" = the start). Refuses, with
-- SQLSTATE 22023: a source that is not pulled (pushed and published
-- sources are not edited), a change that is refused outright (the key of a
-- source that stored events; after-id to or from another style once events
-- are stored: events keyed by id and by text never recognise each other),
-- a change that needs a rewind without p_rewind_to, and p_rewind_to with no
-- change at all (that is `source rewind`). Waits for a loader's turn at the
-- source to end (its lock, p_lock_namespace; at most 30 s), so that no turn
-- stores with the old settings after the edit; the loaders' claims compare
-- the revision, so none starts with them either. A failing source's backoff
-- ends (the next request after its interval): the edit is the fix.
-- Records who, when, what (old and new values; header values and a URL's
-- credentials never) and the rewind; tells the loaders at commit.
-- Returns the settings changed (none: nothing was done), the cursor left
-- (with p_rewind_to) and the source's new revision.
-- Called by: `tributary source edit` (src/postgres/statements/source_registry/edit.sql).
CREATE OR REPLACE FUNCTION tributary.source_edit(p_name text, p_lock_namespace int, p_url text, p_headers text[],
                                                 p_interval_ms int, p_batch_size int, p_timeout_ms int,
                                                 p_reading jsonb, p_rewind_to text,
                                                 OUT changed text[], OUT rewound_from text, OUT revision bigint)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_id int;
    v_kind text;
    v_source tributary.sources;
    v_cursor tributary.cursors;
    v_old_style text;
    v_new_style text;
    v_changes jsonb := '{}'::jsonb;
    v_setting text;
    v_old jsonb;
    v_new jsonb;
    v_effect text;
    v_refused text[] := '{}';
    v_need_rewind text[] := '{}';
    v_lock_timeout text;
    v_due timestamptz;
BEGIN
    changed := '{}';
    SELECT s.id, s.kind INTO v_id, v_kind FROM tributary.sources s WHERE s.name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no source named ''%'' (see `tributary source list`)', p_name USING ERRCODE = 'P0002';
    END IF;
    IF v_kind <> 'http' THEN
        RAISE EXCEPTION 'source ''%'' is %: only a pulled source (--url) can be edited', p_name,
              CASE v_kind WHEN 'push' THEN 'pushed' ELSE v_kind END USING ERRCODE = '22023';
    END IF;
    -- The loader's lock first, as a turn takes it (then gate and cursor rows).
    v_lock_timeout := current_setting('lock_timeout');
    PERFORM set_config('lock_timeout', '30s', true);
    BEGIN
        PERFORM pg_advisory_xact_lock(p_lock_namespace, v_id);
    EXCEPTION WHEN lock_not_available THEN
        RAISE EXCEPTION 'source ''%'' has been held by a loader''s turn for 30 s: try again (a session that holds its lock for good is in tributary.foreign_locks)', p_name
              USING ERRCODE = '55P03';
    END;
    PERFORM set_config('lock_timeout', v_lock_timeout, true);
    SELECT * INTO v_source FROM tributary.sources s WHERE s.id = v_id FOR UPDATE;
    SELECT * INTO v_cursor FROM tributary.cursors c WHERE c.source_id = v_id FOR UPDATE;

    -- What changes, old and new (redacted as the record shows them).
    IF v_source.url IS DISTINCT FROM p_url THEN
        v_changes := v_changes || jsonb_build_object('url', jsonb_build_object(
            'old', tributary.source_edit_shown_url(v_source.url), 'new', tributary.source_edit_shown_url(p_url)));
    END IF;
    IF coalesce(v_source.headers, '{}') IS DISTINCT FROM coalesce(p_headers, '{}') THEN
        v_changes := v_changes || jsonb_build_object('headers', jsonb_build_object(
            'old', (SELECT coalesce(jsonb_agg(split_part(h, ':', 1) || ': <redacted>'), '[]')
                      FROM unnest(v_source.headers) h),
            'new', (SELECT coalesce(jsonb_agg(split_part(h, ':', 1) || ': <redacted>'), '[]')
                      FROM unnest(p_headers) h)));
    END IF;
    IF v_source.interval_ms <> p_interval_ms THEN
        v_changes := v_changes || jsonb_build_object('interval_ms',
                                                     jsonb_build_object('old', v_source.interval_ms, 'new', p_interval_ms));
    END IF;
    IF v_source.batch_size <> p_batch_size THEN
        v_changes := v_changes || jsonb_build_object('batch_size',
                                                     jsonb_build_object('old', v_source.batch_size, 'new', p_batch_size));
    END IF;
    IF v_source.timeout_ms <> p_timeout_ms THEN
        v_changes := v_changes || jsonb_build_object('timeout_ms',
                                                     jsonb_build_object('old', v_source.timeout_ms, 'new', p_timeout_ms));
    END IF;
    FOR v_setting IN SELECT k FROM jsonb_object_keys(coalesce(v_source.reading, '{}')) k
                     UNION SELECT k FROM jsonb_object_keys(coalesce(p_reading, '{}')) k ORDER BY 1 LOOP
        v_old := v_source.reading -> v_setting;
        v_new := p_reading -> v_setting;
        IF v_old IS DISTINCT FROM v_new THEN
            v_changes := v_changes || jsonb_build_object(v_setting,
                                                         jsonb_build_object('old', v_old, 'new', v_new));
        END IF;
    END LOOP;

    SELECT coalesce(array_agg(k ORDER BY k), '{}') INTO changed FROM jsonb_object_keys(v_changes) k;
    IF cardinality(changed) = 0 THEN
        IF p_rewind_to IS NOT NULL THEN
            RAISE EXCEPTION '--rewind-to goes with a change that needs it; to move the cursor alone, use `tributary source rewind %`', p_name
                  USING ERRCODE = '22023';
        END IF;
        revision := v_source.revision;
        RETURN;
    END IF;

    -- What each change does to the cursor.
    v_old_style := coalesce(v_source.reading ->> 'paginate', 'after-id');
    v_new_style := coalesce(p_reading ->> 'paginate', 'after-id');
    FOREACH v_setting IN ARRAY changed LOOP
        v_effect := tributary.source_edit_effect(v_setting, v_new_style, v_cursor.events_stored,
                                                 coalesce(v_cursor.taken, 0), p_batch_size);
        IF v_setting = 'paginate' AND v_cursor.events_stored > 0
           AND (v_old_style = 'after-id') <> (v_new_style = 'after-id') THEN
            v_effect := 'refuse';
        END IF;
        IF v_effect = 'refuse' THEN
            v_refused := v_refused || v_setting;
        ELSIF v_effect = 'rewind' THEN
            v_need_rewind := v_need_rewind || v_setting;
        END IF;
    END LOOP;
    IF cardinality(v_refused) > 0 THEN
        RAISE EXCEPTION 'source ''%'' has stored % events: its % cannot change (events stored are known by their key: they would be stored again); add a new source instead',
              p_name, v_cursor.events_stored,
              CASE WHEN 'key' = ANY (v_refused) THEN 'key' ELSE 'paging between after-id (keyed by id) and another style (keyed by text)' END
              USING ERRCODE = '22023';
    END IF;
    IF cardinality(v_need_rewind) > 0 AND p_rewind_to IS NULL THEN
        RAISE EXCEPTION 'changing % of source ''%'' changes what its cursor means: give --rewind-to CURSOR as well (an id for after-id, else a position; "" = the start; what is stored already is skipped by key)',
              array_to_string(v_need_rewind, ', '), p_name
              USING ERRCODE = '22023';
    END IF;

    -- The rewind, for the style after the change.
    IF p_rewind_to IS NOT NULL THEN
        rewound_from := CASE WHEN v_cursor.position IS NULL THEN v_cursor.last_event_id::text ELSE v_cursor.position END;
        IF v_new_style = 'after-id' THEN
            IF p_rewind_to !~ '^[0-9]{1,18}$' THEN
                RAISE EXCEPTION 'source ''%'' is read by id: --rewind-to must be an id (0 or more)', p_name
                      USING ERRCODE = '22023';
            END IF;
            -- Ids up to where the cursor was may be stored: the loader skips
            -- them (as after `source rewind`).
            UPDATE tributary.cursors c
               SET replay_until = CASE WHEN c.position IS NULL THEN greatest(coalesce(c.replay_until, 0), c.last_event_id) END,
                   last_event_id = p_rewind_to::bigint, position = NULL, taken = 0
             WHERE c.source_id = v_id;
        ELSE
            IF length(p_rewind_to) > 8192 THEN
                RAISE EXCEPTION '--rewind-to is longer than 8192 bytes' USING ERRCODE = '22023';
            END IF;
            UPDATE tributary.cursors c SET position = p_rewind_to, taken = 0 WHERE c.source_id = v_id;
        END IF;
        INSERT INTO tributary.cursor_rewinds (source_id, from_cursor, to_cursor) VALUES (v_id, rewound_from, p_rewind_to);
    END IF;

    UPDATE tributary.sources s
       SET url = p_url, headers = p_headers, interval_ms = p_interval_ms, batch_size = p_batch_size,
           timeout_ms = p_timeout_ms, reading = p_reading, revision = s.revision + 1
     WHERE s.id = v_id
    RETURNING s.revision INTO revision;
    -- A source failing (or failing over) with the old settings is asked
    -- again with the new ones after its interval, not after its backoff.
    -- A rate limit's hold (throttled) stays: the API set it.
    -- The time reckoned first: Citus refuses a stable function of a column
    -- in an UPDATE of a distributed table (docs/citus.md). No claim moves
    -- last_request meanwhile: this holds the source's lock.
    SELECT greatest(now(), coalesce(g.last_request, now()) + p_interval_ms * interval '1 ms') INTO v_due
      FROM tributary.gates g WHERE g.source_id = v_id;
    UPDATE tributary.gates g
       SET next_allowed_at = least(g.next_allowed_at, v_due)
     WHERE g.source_id = v_id AND g.state IN ('failing', 'transient');
    INSERT INTO tributary.source_edits (source_id, revision, changes, rewound_from, rewound_to)
    VALUES (v_id, revision, v_changes, rewound_from, p_rewind_to);
    PERFORM pg_notify('tributary_control', 'sources');    -- src/postgres/control_channel.h
END $$;
