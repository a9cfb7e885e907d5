-- The console's page of one source (issue 17; docs/console.md): GET
-- /api/sources/NAME, one jsonb document.
--
-- Public API (sql/api/): the console's role (tributary_console) may execute the
-- console_* functions only. Errors a caller can fix carry SQLSTATE 22023
-- (bad argument: 400) or P0002 (no such source or group: 404).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): the console
-- reads no table itself, and never a header value or a URL's query.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- The newest p_max events of a source, newest first. A source keyed by id
-- (a pulled after-id source: its ids only grow) through each partition's
-- (source_id, event_id) index, backwards; any other through the newest
-- 50 000 events of the log ((tx_id, seq) backwards), else, for a source
-- quiet that long, its own events (the same index, event_id NULL), sorted:
-- as many as the source stored in the partitions it stored in. On Citus the
-- log has no one newest: its own events, newest first, on its worker. Columns,
-- not SETOF tributary.events: that type followed the table when migration
-- 0013 renamed it events_0.
CREATE OR REPLACE FUNCTION tributary.console_last_events(p_source int, p_by_id boolean, p_max int)
RETURNS TABLE (seq bigint, event_id bigint, event_key text, loaded_at timestamptz, payload jsonb)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    IF p_by_id THEN
        RETURN QUERY SELECT e.seq, e.event_id, e.event_key, e.loaded_at, e.payload FROM tributary.events e
                      WHERE e.source_id = p_source AND e.event_id IS NOT NULL
                      ORDER BY e.source_id DESC, e.event_id DESC LIMIT p_max;
        RETURN;
    END IF;
    IF tributary.log_is_distributed() THEN
        RETURN QUERY SELECT e.seq, e.event_id, e.event_key, e.loaded_at, e.payload FROM tributary.events e
                      WHERE e.source_id = p_source ORDER BY e.tx_id DESC, e.seq DESC LIMIT p_max;
        RETURN;
    END IF;
    RETURN QUERY SELECT r.seq, r.event_id, r.event_key, r.loaded_at, r.payload
                   FROM (SELECT e.* FROM tributary.events e ORDER BY e.tx_id DESC, e.seq DESC LIMIT 50000) r
                  WHERE r.source_id = p_source ORDER BY r.tx_id DESC, r.seq DESC LIMIT p_max;
    IF FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT e.seq, e.event_id, e.event_key, e.loaded_at, e.payload FROM tributary.events e
                  WHERE e.source_id = p_source AND e.event_id IS NULL
                  ORDER BY e.tx_id DESC, e.seq DESC LIMIT p_max;
END $$;

-- {"name", "kind", "state", "enabled", "config", cursor..., "failing_since",
-- "errors", "per_minute", "last_events"}: config with its URL without query
-- or user:password and its header values "<redacted>" (reading and
-- receiving as stored: they hold variable names, never secrets); the
-- recent errors newest first (at most 20); the last hour per minute; the
-- last 20 events, newest first. No such source: P0002.
-- Called by: the console, GET /api/sources/NAME.
CREATE OR REPLACE FUNCTION tributary.console_source(p_name text) RETURNS jsonb
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    s tributary.sources;
    g tributary.gates;
    c tributary.cursors;
    v_failing_since timestamptz;
    v_errors jsonb;
    v_minutes jsonb;
    v_last jsonb;
BEGIN
    SELECT * INTO s FROM tributary.sources x WHERE x.name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no source named ''%''', p_name USING ERRCODE = 'P0002';
    END IF;
    SELECT * INTO g FROM tributary.gates x WHERE x.source_id = s.id;
    SELECT * INTO c FROM tributary.cursors x WHERE x.source_id = s.id;
    -- A statement each: on Citus a source's errors, minutes and events are
    -- on its worker, and a statement that read several of them would be
    -- sent there whole, with the calls inside it.
    IF g.failures > 0 THEN
        SELECT coalesce(min(e.first_at), g.last_error_at) INTO v_failing_since
          FROM tributary.source_errors e
         WHERE e.source_id = s.id AND e.first_at >= coalesce(g.last_success_at, '-infinity');
    END IF;
    SELECT coalesce(jsonb_agg(jsonb_build_object(
                       'first_at', tributary.console_time(e.first_at),
                       'last_at', tributary.console_time(e.last_at), 'count', e.count,
                       'error', e.error) ORDER BY e.id DESC), '[]')
      INTO v_errors
      FROM (SELECT * FROM tributary.source_errors e WHERE e.source_id = s.id ORDER BY e.id DESC LIMIT 20) e;
    v_minutes := tributary.console_minutes(s.id);
    SELECT coalesce(jsonb_agg(jsonb_build_object(
                       'seq', e.seq, 'event_id', e.event_id, 'event_key', e.event_key,
                       'loaded_at', tributary.console_time(e.loaded_at), 'payload', e.payload)
                     ORDER BY e.ordinality), '[]')
      INTO v_last
      FROM tributary.console_last_events(s.id, s.kind = 'http' AND c.position IS NULL, 20) WITH ORDINALITY e;
    RETURN tributary.console_source_row(s, g, c) || jsonb_build_object(
        'enabled', s.enabled,
        'config', jsonb_build_object(
            'url', tributary.console_shown_url(s.url), 'headers', tributary.console_shown_headers(s.headers),
            'interval_ms', s.interval_ms, 'batch_size', s.batch_size, 'timeout_ms', s.timeout_ms,
            'reading', s.reading, 'receiving', s.receiving, 'publishers', to_jsonb(s.publishers)),
        'last_request_at', tributary.console_time(g.last_request),
        'failing_since', tributary.console_time(v_failing_since),
        'errors', v_errors,
        'per_minute', v_minutes,
        'last_events', v_last);
END $$;
