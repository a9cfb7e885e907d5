-- The console's actions (issue 17; docs/console.md): pause, resume and
-- nudge a source; replay a group's dead letters; reset a group. Each
-- returns the small jsonb document the API answers with. They do what
-- `tributary source pause|resume`, run's nudge, `dlq replay` and `group
-- reset` do, and tell the loaders as those do (NOTIFY tributary_control,
-- 'sources', at commit).
--
-- Public API (sql/api/): the console's role (tributary_console) may execute the
-- console_* functions only. Errors a caller can fix carry SQLSTATE 22023
-- (bad argument: 400) or P0002 (no such source or group: 404).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): the console
-- reads no table itself, and never a header value or a URL's query.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Pauses (p_enabled false) or resumes a source of any kind:
-- {"ok": true, "source": NAME, "enabled": bool}. No such source: P0002.
-- Called by: console_pause, console_resume.
CREATE OR REPLACE FUNCTION tributary.console_set_enabled(p_name text, p_enabled boolean) RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    UPDATE tributary.sources SET enabled = p_enabled WHERE name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no source named ''%''', p_name USING ERRCODE = 'P0002';
    END IF;
    PERFORM pg_notify('tributary_control', 'sources');    -- src/postgres/control_channel.h
    RETURN jsonb_build_object('ok', true, 'source', p_name, 'enabled', p_enabled);
END $$;

-- Called by: the console, POST /api/sources/NAME/pause.
CREATE OR REPLACE FUNCTION tributary.console_pause(p_name text) RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
SELECT tributary.console_set_enabled(p_name, false) $$;

-- Called by: the console, POST /api/sources/NAME/resume.
CREATE OR REPLACE FUNCTION tributary.console_resume(p_name text) RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
SELECT tributary.console_set_enabled(p_name, true) $$;

-- Nudges a pulled source as run's POST /sources/NAME/nudge does
-- (tributary.nudge_gate): {"ok": true, "source": NAME, "nudged": bool},
-- nudged false for a pushed or published source (nobody asks it). No such
-- source: P0002.
-- Called by: the console, POST /api/sources/NAME/nudge.
CREATE OR REPLACE FUNCTION tributary.console_nudge(p_name text) RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_nudged boolean;
BEGIN
    IF NOT EXISTS (SELECT FROM tributary.sources s WHERE s.name = p_name) THEN
        RAISE EXCEPTION 'no source named ''%''', p_name USING ERRCODE = 'P0002';
    END IF;
    v_nudged := EXISTS (SELECT FROM tributary.nudge_gate(p_name));
    IF v_nudged THEN
        PERFORM pg_notify('tributary_control', 'sources');
    END IF;
    RETURN jsonb_build_object('ok', true, 'source', p_name, 'nudged', v_nudged);
END $$;

-- Puts the group's dead letter p_seq (NULL: all of them) back as a retry
-- due now (dead_letter_replay): {"ok": true, "replayed": n}. No such group:
-- P0002.
-- Called by: the console, POST /api/groups/NAME/replay.
CREATE OR REPLACE FUNCTION tributary.console_replay(p_group text, p_seq bigint) RETURNS jsonb
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
SELECT jsonb_build_object('ok', true, 'replayed', tributary.dead_letter_replay(p_group, p_seq)) $$;

-- Moves the group's cursor to p_to ('beginning', 'end' or a time) as
-- `group reset --to` (group_reset): {"ok": true}. A bad p_to: 22023; no
-- such group: P0002. (The console checks the typed confirmation.)
-- Called by: the console, POST /api/groups/NAME/reset.
CREATE OR REPLACE FUNCTION tributary.console_reset(p_group text, p_to text) RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM tributary.group_reset(p_group, p_to);
    RETURN jsonb_build_object('ok', true);
END $$;
