-- The console's sources table (issue 17; docs/console.md): GET
-- /api/sources, one jsonb document.
--
-- Public API (sql/api/): the console's role (tributary_console) may execute the
-- console_* functions only. Errors a caller can fix carry SQLSTATE 22023
-- (bad argument: 400) or P0002 (no such source or group: 404).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): the console
-- reads no table itself, and never a header value or a URL's query.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- A source's row in the table (and the head of its own page): never its
-- URL or headers.
CREATE OR REPLACE FUNCTION tributary.console_source_row(s tributary.sources, g tributary.gates, c tributary.cursors)
RETURNS jsonb
LANGUAGE sql STABLE AS $$
SELECT jsonb_build_object(
           'name', s.name, 'kind', s.kind, 'state', tributary.console_state(s.kind, s.enabled, g.state),
           'cursor', CASE WHEN c.source_id IS NULL THEN NULL
                          WHEN c.position IS NULL THEN to_jsonb(c.last_event_id) ELSE to_jsonb(c.position) END,
           'stored', c.events_stored, 'lag', g.backlog, 'failures', g.failures,
           'last_success_at', tributary.console_time(g.last_success_at), 'last_error', g.last_error,
           'last_error_at', tributary.console_time(g.last_error_at),
           'next_request_at', CASE WHEN s.enabled THEN tributary.console_time(g.next_allowed_at) END) $$;

-- {"total", "matched", "offset", "limit", "sources": [...]}: the sources
-- whose names p_pattern matches (a group pattern; '>' every one), in state
-- p_state ('' or NULL: any; else ok, transient, throttled, failing, paused,
-- pushed, published), sorted by p_sort (name, lag, errors: failures then
-- the last error's time, last_success), ascending or p_desc, ties by name;
-- p_limit 1..500 from p_offset. Anything else: 22023.
-- Called by: the console, GET /api/sources.
CREATE OR REPLACE FUNCTION tributary.console_sources(p_pattern text, p_state text, p_sort text, p_desc boolean,
                                                     p_limit int, p_offset int) RETURNS jsonb
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_regex text;
    v_result jsonb;
BEGIN
    PERFORM tributary.check_pattern(p_pattern);
    v_regex := CASE WHEN p_pattern <> '>' THEN tributary.pattern_regex(p_pattern) END;
    IF coalesce(p_state, '') NOT IN ('', 'ok', 'transient', 'throttled', 'failing', 'paused', 'pushed', 'published') THEN
        RAISE EXCEPTION 'invalid state ''%'': use ok, transient, throttled, failing, paused, pushed or published',
            p_state USING ERRCODE = '22023';
    END IF;
    IF p_sort IS NULL OR p_sort NOT IN ('name', 'lag', 'errors', 'last_success') THEN
        RAISE EXCEPTION 'invalid sort ''%'': use name, lag, errors or last_success', p_sort USING ERRCODE = '22023';
    END IF;
    PERFORM tributary.console_check_page(p_limit, p_offset);
    WITH listed AS MATERIALIZED (
        SELECT s, g, c, s.name,
               tributary.console_state(s.kind, s.enabled, g.state) AS state,
               CASE p_sort WHEN 'lag' THEN g.backlog::double precision
                           WHEN 'errors' THEN g.failures::double precision
                           WHEN 'last_success' THEN extract(epoch FROM g.last_success_at)::double precision END AS key,
               CASE WHEN p_sort = 'errors' THEN extract(epoch FROM g.last_error_at)::double precision END AS key2
          FROM tributary.sources s
          LEFT JOIN tributary.gates g ON g.source_id = s.id
          LEFT JOIN tributary.cursors c ON c.source_id = s.id
         WHERE v_regex IS NULL OR s.name ~ v_regex
    ), matched AS (
        SELECT l.* FROM listed l WHERE coalesce(p_state, '') = '' OR l.state = p_state
    ), page AS (
        SELECT m.*, row_number() OVER (ORDER BY
                   CASE WHEN NOT p_desc THEN m.key END ASC NULLS LAST,
                   CASE WHEN p_desc THEN m.key END DESC NULLS LAST,
                   CASE WHEN NOT p_desc THEN m.key2 END ASC NULLS LAST,
                   CASE WHEN p_desc THEN m.key2 END DESC NULLS LAST,
                   CASE WHEN p_sort = 'name' AND p_desc THEN m.name END DESC,
                   m.name) AS n
          FROM matched m
    )
    SELECT jsonb_build_object(
               'total', (SELECT count(*) FROM tributary.sources),
               'matched', (SELECT count(*) FROM matched),
               'offset', p_offset, 'limit', p_limit,
               'sources', (SELECT coalesce(jsonb_agg(tributary.console_source_row(p.s, p.g, p.c) ORDER BY p.n),
                                           '[]')
                             FROM (SELECT * FROM page ORDER BY page.n LIMIT p_limit OFFSET p_offset) p))
      INTO v_result;
    RETURN v_result;
END $$;
