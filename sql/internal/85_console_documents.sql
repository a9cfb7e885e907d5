-- Pieces of the console's documents (sql/api/9x_console_*.sql; the
-- documents are docs/console.md's): times, states, redaction, the
-- per-minute series and a group's row.
--
-- Internal (sql/internal/): called by the console's functions, which run
-- as their owner. Nothing else should call them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- A time as the console shows it: ISO-8601 in UTC with milliseconds
-- ("2026-11-24T23:19:38.123Z"); NULL for NULL and for ±infinity (a gate
-- never asked is due at -infinity: "no time").
CREATE OR REPLACE FUNCTION tributary.console_time(p_at timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT CASE WHEN isfinite(p_at) THEN to_char(p_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') END $$;

-- A source's state: paused (any kind, not enabled), pushed, published, or
-- its gate's (ok, transient, throttled, failing).
CREATE OR REPLACE FUNCTION tributary.console_state(p_kind text, p_enabled boolean, p_gate_state text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT CASE WHEN NOT p_enabled THEN 'paused'
            WHEN p_kind = 'push' THEN 'pushed'
            WHEN p_kind = 'published' THEN 'published'
            ELSE coalesce(p_gate_state, 'ok') END $$;

-- A URL as it may be shown: without its query and fragment (where APIs put
-- keys) and without user:password, as src/http/shown_url.cpp (the last '@'
-- before the path, so a password holding '@' leaves nothing behind).
CREATE OR REPLACE FUNCTION tributary.console_shown_url(p_url text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT regexp_replace(split_part(split_part(p_url, '?', 1), '#', 1),
                      '^((?:[A-Za-z][A-Za-z0-9+.-]*://)?)[^/]*@', '\1') $$;

-- Request headers as they may be shown: each name, its value "<redacted>".
CREATE OR REPLACE FUNCTION tributary.console_shown_headers(p_headers text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
SELECT coalesce(jsonb_agg(btrim(split_part(h.line, ':', 1)) || ': <redacted>' ORDER BY h.n), '[]')
  FROM unnest(p_headers) WITH ORDINALITY AS h(line, n) $$;

-- A page of a list (sources, a group's dead letters): 1 to 500 rows from
-- offset 0 on, else 22023 (the console's 400).
CREATE OR REPLACE FUNCTION tributary.console_check_page(p_limit int, p_offset int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_limit IS NULL OR p_limit NOT BETWEEN 1 AND 500 THEN
        RAISE EXCEPTION 'limit must be between 1 and 500' USING ERRCODE = '22023';
    END IF;
    IF p_offset IS NULL OR p_offset < 0 THEN
        RAISE EXCEPTION 'offset must be 0 or more' USING ERRCODE = '22023';
    END IF;
END
$$;

-- The last 60 minutes of events stored, oldest first, the current minute
-- last: of one source (p_source) or, NULL, of the whole log.
-- PL/pgSQL, whose body is checked when it runs: migration 0013 applies
-- these definitions before 0014 creates the tables.
CREATE OR REPLACE FUNCTION tributary.console_minutes(p_source int) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_from timestamptz := date_trunc('minute', now()) - interval '59 minutes';
    v_minutes timestamptz[];
    v_events bigint[];
BEGIN
    -- The hour's rows first, in a statement of their own: on Citus a
    -- source's minutes are on its worker, and a subquery per minute of them
    -- cannot be planned there.
    IF p_source IS NULL THEN
        SELECT array_agg(l.minute), array_agg(l.events) INTO v_minutes, v_events
          FROM tributary.log_minutes l WHERE l.minute >= v_from;
    ELSE
        SELECT array_agg(s.minute), array_agg(s.events) INTO v_minutes, v_events
          FROM tributary.source_minutes s WHERE s.source_id = p_source AND s.minute >= v_from;
    END IF;
    RETURN jsonb_build_object(
        'from', tributary.console_time(v_from),
        'step_seconds', 60,
        'events', (SELECT jsonb_agg(coalesce(c.events, 0) ORDER BY m.minute)
                     FROM generate_series(v_from, v_from + interval '59 minutes', interval '1 minute') AS m(minute)
                     LEFT JOIN unnest(coalesce(v_minutes, '{}'), coalesce(v_events, '{}')) AS c(minute, events)
                       ON c.minute = m.minute));
END $$;

-- Seconds of an interval, as the documents give durations.
CREATE OR REPLACE FUNCTION tributary.console_seconds(p_interval interval) RETURNS double precision
LANGUAGE sql IMMUTABLE AS $$ SELECT extract(epoch FROM p_interval)::double precision $$;

-- How many partitions each group holds back from retention (state 'held').
CREATE OR REPLACE FUNCTION tributary.console_held_partitions() RETURNS TABLE (group_name text, partitions int)
LANGUAGE sql STABLE AS $$
SELECT g.name, count(*)::int
  FROM tributary.partition_retention() r, unnest(r.held_by) g(name)
 WHERE r.state = 'held'
 GROUP BY g.name $$;

-- console_group_status had one argument before the cap (issue 17, never
-- released): a database that has it gets the new one instead.
DROP FUNCTION IF EXISTS tributary.console_group_status(text);

-- The view group_status's rows (of one group, p_name, or of all, NULL), by
-- name, for the console: the same figures, but each group's backlog is
-- counted only up to p_cap events (group_backlog_capped: events_behind_capped
-- says when it is "at least"), so a page costs at most p_cap events read per
-- group however far behind the groups are; and each pattern whose matches
-- a change to the sources cleared (consumer_groups.source_bits NULL, until
-- the group's next read) is matched once per call, not once per group
-- (24 ms a pattern at 10 000 sources: 100 idle groups cost 2.4 s through
-- the view). The matches are not kept here (a STABLE function, one
-- snapshot): the console keeps them first, in a statement of its own
-- (console_keep_group_matches), so this matches again only the patterns of
-- groups whose rows a read held locked at that moment.
-- Called by: console_overview, console_groups, console_group.
CREATE OR REPLACE FUNCTION tributary.console_group_status(p_name text, p_cap bigint)
RETURNS TABLE (name text, pattern text, ordered boolean, max_deliveries int, events_behind bigint,
               events_behind_capped boolean, oldest_unprocessed_age interval, batches_in_flight int,
               retries_waiting int, dead_letters int)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    g tributary.consumer_groups;
    v_patterns text[] := '{}';
    v_bits bit varying[] := '{}';
    v_at int;
    v_ids int[] := '{}';
    v_behind bigint[] := '{}';
    v_capped boolean[] := '{}';
    v_oldest timestamptz[] := '{}';
    v_backlog record;
    -- On Citus the batches and retries of each group are looked up on the
    -- workers by their own functions (a join of the coordinator's tables
    -- with the distributed log is refused: docs/citus.md).
    v_by_shard boolean := tributary.lanes_by_shard();
    v_flight record;
    v_retry record;
    v_batches int[] := '{}';
    v_flight_oldest timestamptz[] := '{}';
    v_retries int[] := '{}';
    v_retry_oldest timestamptz[] := '{}';
BEGIN
    FOR g IN SELECT * FROM tributary.consumer_groups cg WHERE p_name IS NULL OR cg.name = p_name ORDER BY cg.name LOOP
        -- A pattern without wildcards is one source, found by its name.
        IF tributary.pattern_has_wildcard(g.pattern) AND g.pattern <> '>' AND g.source_bits IS NULL THEN
            v_at := array_position(v_patterns, g.pattern);
            IF v_at IS NULL THEN
                v_patterns := v_patterns || g.pattern;
                v_bits := v_bits || tributary.matching_source_bits(g.pattern);
                v_at := cardinality(v_patterns);
            END IF;
            g.source_bits := v_bits[v_at];
        END IF;
        SELECT * INTO v_backlog FROM tributary.group_backlog_capped(g, p_cap);
        v_ids := v_ids || g.id;
        v_behind := v_behind || v_backlog.events;
        v_capped := v_capped || v_backlog.capped;
        v_oldest := v_oldest || v_backlog.oldest;
        IF v_by_shard THEN
            SELECT * INTO v_flight FROM tributary.group_flight(g);
            SELECT * INTO v_retry FROM tributary.group_retries(g);
            v_batches := v_batches || v_flight.batches;
            v_flight_oldest := v_flight_oldest || v_flight.oldest;
            v_retries := v_retries || v_retry.events;
            v_retry_oldest := v_retry_oldest || v_retry.oldest;
        END IF;
    END LOOP;
    IF v_by_shard THEN
        RETURN QUERY
        WITH backlog AS (
            SELECT * FROM unnest(v_ids, v_behind, v_capped, v_oldest, v_batches, v_flight_oldest, v_retries,
                                 v_retry_oldest)
                       AS b(group_id, events, capped, oldest, batches, flight_oldest, retries, retry_oldest)),
        dead AS (
            SELECT d.group_id, count(*)::int AS events
              FROM tributary.consumer_dead_letters d WHERE d.group_id = ANY (v_ids) GROUP BY d.group_id)
        SELECT cg.name, cg.pattern, cg.ordered, cg.max_deliveries, b.events, b.capped,
               now() - least(b.oldest, b.flight_oldest, b.retry_oldest), coalesce(b.batches, 0),
               coalesce(b.retries, 0), coalesce(dead.events, 0)
          FROM backlog b
          JOIN tributary.consumer_groups cg ON cg.id = b.group_id
          LEFT JOIN dead ON dead.group_id = b.group_id
         ORDER BY cg.name;
        RETURN;
    END IF;
    -- The rest in one statement for all the groups: a statement per group
    -- cost more to plan (the log's partitions) than to run, 1.5 ms a group.
    RETURN QUERY
    WITH backlog AS (
        SELECT * FROM unnest(v_ids, v_behind, v_capped, v_oldest) AS b(group_id, events, capped, oldest)),
    flight AS (
        SELECT b.group_id, count(*)::int AS batches,
               min((SELECT min(e.loaded_at) FROM tributary.events e
                     WHERE e.seq = ANY (b.seqs)
                       AND e.tx_id BETWEEN tributary.tx_from(b.tx_from) AND tributary.tx_to(b.tx_to))) AS oldest
          FROM tributary.consumer_batches b WHERE b.group_id = ANY (v_ids) GROUP BY b.group_id),
    retry AS (
        SELECT r.group_id, count(*)::int AS events, min(e.loaded_at) AS oldest
          FROM tributary.consumer_retries r
          JOIN tributary.events e
            ON e.seq = r.seq AND e.tx_id BETWEEN tributary.tx_from(r.tx_from) AND tributary.tx_to(r.tx_to)
         WHERE r.group_id = ANY (v_ids) GROUP BY r.group_id),
    dead AS (
        SELECT d.group_id, count(*)::int AS events
          FROM tributary.consumer_dead_letters d WHERE d.group_id = ANY (v_ids) GROUP BY d.group_id)
    SELECT cg.name, cg.pattern, cg.ordered, cg.max_deliveries, b.events, b.capped,
           now() - least(b.oldest, flight.oldest, retry.oldest), coalesce(flight.batches, 0),
           coalesce(retry.events, 0), coalesce(dead.events, 0)
      FROM backlog b
      JOIN tributary.consumer_groups cg ON cg.id = b.group_id
      LEFT JOIN flight ON flight.group_id = b.group_id
      LEFT JOIN retry ON retry.group_id = b.group_id
      LEFT JOIN dead ON dead.group_id = b.group_id
     ORDER BY cg.name;
END $$;

-- The lanes of group g (issue 28) as the console shows them, in lane order:
-- [{"lane", "holder" (null: nobody holds it, its events wait),
-- "events_behind" and "events_behind_capped" (counted up to p_cap),
-- "oldest_unprocessed_age", "batches_in_flight", "retries_waiting"}, ...]
-- (lane_rows); NULL for a group of one lane. A lane's events are counted
-- through the lane index, so a lane costs a read of at most p_cap + 1 of its
-- events, whatever the other lanes hold.
-- Called by: console_lanes.
CREATE OR REPLACE FUNCTION tributary.console_lane_rows(g tributary.consumer_groups, p_cap bigint) RETURNS jsonb
LANGUAGE sql STABLE AS $$
SELECT jsonb_agg(jsonb_build_object(
           'lane', l.lane, 'holder', l.holder, 'events_behind', l.events_behind,
           'events_behind_capped', l.events_behind_capped,
           'oldest_unprocessed_age', coalesce(tributary.console_seconds(l.oldest_unprocessed_age), 0),
           'batches_in_flight', l.batches_in_flight, 'retries_waiting', l.retries_waiting) ORDER BY l.lane)
  FROM tributary.lane_rows(g, p_cap) l $$;
