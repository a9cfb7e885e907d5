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

-- The last 60 minutes of events stored, oldest first, the current minute
-- last: of one source (p_source) or, NULL, of the whole log.
-- PL/pgSQL, whose body is checked when it runs: migration 0013 applies
-- these definitions before 0014 creates the tables.
CREATE OR REPLACE FUNCTION tributary.console_minutes(p_source int) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
BEGIN
RETURN (
WITH span AS (SELECT date_trunc('minute', now()) - interval '59 minutes' AS from_minute)
SELECT jsonb_build_object(
           'from', tributary.console_time(span.from_minute),
           'step_seconds', 60,
           'events', (SELECT jsonb_agg(coalesce(CASE WHEN p_source IS NULL
                                                     THEN (SELECT l.events FROM tributary.log_minutes l
                                                            WHERE l.minute = m.minute)
                                                     ELSE (SELECT s.events FROM tributary.source_minutes s
                                                            WHERE s.source_id = p_source AND s.minute = m.minute)
                                                END, 0) ORDER BY m.minute)
                        FROM generate_series(span.from_minute, span.from_minute + interval '59 minutes',
                                             interval '1 minute') AS m(minute)))
  FROM span);
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
