-- Publishing events from SQL: the transactional outbox.
--
-- Public API (sql/api/): what users and consumers call. Errors a caller can
-- fix carry SQLSTATE 22023 (bad argument) or 42501 (not allowed).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): a caller
-- needs EXECUTE on them (tributary_publisher, sql/privileges/), not the
-- tables behind them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.
--
-- Call publish in the application's own transaction, next to the business
-- change: the event is stored if and only if that transaction commits, and
-- consumers see it only after the commit (their watermark, docs/design.md
-- §7). A key already stored in the source stores nothing: publishing again
-- after a retry, or from two transactions at once, is harmless (the second
-- waits for the first to commit or roll back, then stores nothing or
-- stores). publish sends no NOTIFY: a notifying transaction holds a
-- cluster-wide lock through its commit, which would make every publishing
-- transaction wait for the others'. Consumers are woken by the herald once
-- the event is readable (sql/internal/87_herald.sql).

-- The source p_source, if it is a published source the session may publish
-- to, held against its removal until this transaction ends. Who may: a
-- member of one of the roles in its publishers (`source add --published
-- --publisher ROLE`). Checked against session_user, the login role: a
-- SECURITY DEFINER function cannot see a role taken with SET ROLE. An
-- unknown source and a forbidden one get the same error, so that names
-- cannot be probed.
--
-- How it is held: in READ COMMITTED (the default), by the source's publish
-- lock taken shared (advisory, (0x74726962, -id): src/postgres/advisory_keys.h),
-- which the trigger sources_keep_events takes exclusive before it looks for
-- events; the row is read again after the lock, with a fresh snapshot, so
-- a source removed meanwhile is seen gone. Not a row lock: a KEY SHARE lock
-- taken by many publishing sessions at once makes a new multixact per
-- publish (measured from 16 sessions: one per publish, 11 to 16 members
-- each, 10 000 a second at 10 000 publishes a second), which autovacuum
-- must then freeze; the throughput was about the same.
-- In REPEATABLE READ or SERIALIZABLE the snapshot is the transaction's: a
-- removal committed after it would not be seen, so there the row is locked
-- FOR KEY SHARE instead, as before, which `source remove` waits for too
-- (and which fails with a serialization error if the source was removed).
-- Internal: called by the publish functions below.
CREATE OR REPLACE FUNCTION tributary.publishing_source(p_source text) RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_source tributary.sources;
    v_role text;
BEGIN
    -- READ UNCOMMITTED is READ COMMITTED in PostgreSQL: a snapshot per statement.
    IF current_setting('transaction_isolation') IN ('read committed', 'read uncommitted') THEN
        SELECT * INTO v_source FROM tributary.sources s WHERE s.name = p_source AND s.kind = 'published';
        IF FOUND THEN
            PERFORM pg_advisory_xact_lock_shared(1953655138, -v_source.id);
            SELECT * INTO v_source FROM tributary.sources s WHERE s.id = v_source.id;
        END IF;
    ELSE
        SELECT * INTO v_source FROM tributary.sources s WHERE s.name = p_source AND s.kind = 'published'
           FOR KEY SHARE;
    END IF;
    -- A loop of simple expressions, not a query over unnest(): PL/pgSQL
    -- evaluates these without starting the executor, about a tenth of
    -- publish's own time (bench/publish, issue 27).
    IF FOUND THEN
        FOREACH v_role IN ARRAY v_source.publishers LOOP
            IF to_regrole(v_role) IS NOT NULL AND pg_has_role(session_user, v_role, 'MEMBER') THEN
                IF NOT v_source.enabled THEN
                    RAISE EXCEPTION 'published source "%" is paused', p_source USING ERRCODE = '55000',
                        HINT = 'tributary source resume ' || p_source;
                END IF;
                RETURN v_source.id;
            END IF;
        END LOOP;
    END IF;
    RAISE EXCEPTION 'no published source "%" that % may publish to', p_source, session_user
        USING ERRCODE = '42501',
              HINT = 'Add it with `tributary source add NAME --published --publisher ROLE`, '
                     'and make the login role a member of ROLE.';
END $$;

-- Publishes one event: p_payload under p_key (1 to 1024 bytes:
-- the same limit as a pulled key). true: stored; false: the source had the
-- key already (nothing stored).
-- Called by: applications, in their own transactions.
CREATE OR REPLACE FUNCTION tributary.publish(p_source text, p_key text, p_payload jsonb)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_source int := tributary.publishing_source(p_source);
BEGIN
    PERFORM tributary.check_published(p_key, p_payload);
    -- The key first: a transaction publishing the same key waits here for
    -- ours to end, and stores nothing if ours commits.
    INSERT INTO tributary.event_keys (source_id, event_key) VALUES (v_source, p_key) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    INSERT INTO tributary.events (source_id, event_key, payload) VALUES (v_source, p_key, p_payload);
    RETURN true;
END $$;

-- Publishes many events at once: p_events is a JSON array of objects
-- {"key": text, "payload": any JSON}, stored in array order. Returns how
-- many were stored (keys the source had already, or that came earlier in
-- the array, store nothing). All or nothing: one bad element refuses the
-- whole call.
-- Called by: applications, in their own transactions.
CREATE OR REPLACE FUNCTION tributary.publish(p_source text, p_events jsonb)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_source int := tributary.publishing_source(p_source);
    v_stored bigint;
    v_bad bigint;
BEGIN
    IF jsonb_typeof(p_events) IS DISTINCT FROM 'array' THEN
        RAISE EXCEPTION 'p_events must be a JSON array of {"key": ..., "payload": ...}' USING ERRCODE = '22023';
    END IF;
    SELECT e.n INTO v_bad FROM jsonb_array_elements(p_events) WITH ORDINALITY AS e(value, n)
     WHERE jsonb_typeof(e.value) <> 'object' OR jsonb_typeof(e.value->'key') IS DISTINCT FROM 'string'
           OR NOT e.value ? 'payload'
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'element % of p_events is not {"key": "...", "payload": ...}', v_bad USING ERRCODE = '22023';
    END IF;
    PERFORM tributary.check_published(e->>'key', e->'payload') FROM jsonb_array_elements(p_events) e;
    WITH input AS (
        SELECT e.value->>'key' AS key, e.value->'payload' AS payload, e.n
          FROM jsonb_array_elements(p_events) WITH ORDINALITY AS e(value, n)
    ), new_keys AS (
        INSERT INTO tributary.event_keys (source_id, event_key)
        SELECT v_source, i.key FROM input i ORDER BY i.n
            ON CONFLICT DO NOTHING
        RETURNING event_key
    )
    INSERT INTO tributary.events (source_id, event_key, payload)
    SELECT v_source, f.key, f.payload
      FROM (SELECT DISTINCT ON (i.key) i.key, i.payload, i.n FROM input i ORDER BY i.key, i.n) f
      JOIN new_keys k ON k.event_key = f.key
     ORDER BY f.n;
    GET DIAGNOSTICS v_stored = ROW_COUNT;
    RETURN v_stored;
END $$;

-- Refuses a key or payload that publish cannot store (22023, saying which).
-- Internal: called by the publish functions above.
-- No SET search_path of its own: its callers pin it, and a SET would cost
-- every publish a configuration change on entry and exit; it runs with the
-- caller's rights and names nothing but pg_catalog's built-ins.
CREATE OR REPLACE FUNCTION tributary.check_published(p_key text, p_payload jsonb) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_key IS NULL OR p_key = '' OR octet_length(p_key) > 1024 THEN
        RAISE EXCEPTION 'an event key must be 1 to 1024 bytes, got %',
            CASE WHEN p_key IS NULL THEN 'none' ELSE octet_length(p_key) || ' bytes' END
            USING ERRCODE = '22023';
    END IF;
    IF p_payload IS NULL THEN
        RAISE EXCEPTION 'the event keyed "%" has no payload', p_key USING ERRCODE = '22023';
    END IF;
END $$;
