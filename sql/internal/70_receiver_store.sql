-- Storing what senders pushed: the receiver's one statement per commit.
--
-- Internal (sql/internal/): called by `tributary receive` only
-- (src/postgres/postgres_pushed_events.cpp); only tributary_receiver may
-- execute it (sql/privileges/20_roles.sql). Unlike the loader's functions it
-- runs as its owner (SECURITY DEFINER; search_path pinned): the receiver
-- needs no privilege on the tables, and cannot write outside pushed sources.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Stores the events of many requests in one transaction (a group commit):
-- event i belongs to request p_requests[i], of source p_sources[i], with key
-- p_keys[i] and payload p_payloads->i; requests are numbered from 1 in the
-- order they were received, their events in order. Returns one row per
-- request: how many of its events were stored (a key its source had
-- already, or that an earlier event of this call had, stores nothing), or
-- NULL when its source is no longer an enabled pushed source (removed,
-- paused, changed): nothing of it stored.
-- The sources are held against their removal until the commit, so no event
-- outlives its source's row, the way publish holds its source (see
-- publishing_source, api/80_publish.sql): in READ COMMITTED (the receiver's
-- transactions) by each source's publish lock taken shared (advisory,
-- (0x74726962, -id): src/postgres/advisory_keys.h), in ascending id order,
-- which the trigger sources_keep_events takes exclusive before it looks for
-- events; the rows are read after the locks, with a fresh snapshot, so a
-- source removed meanwhile is seen gone (its requests get NULL). Not a row
-- lock: two receivers holding KEY SHARE on one row at once make a multixact
-- per group commit, which autovacuum must then freeze. In REPEATABLE READ
-- or SERIALIZABLE (a database whose default is one of them) the snapshot is
-- the transaction's and could not see a removal committed while we waited,
-- so there the rows are locked FOR KEY SHARE instead, which `source remove`
-- waits for too.
-- It sends no NOTIFY (a notifying commit waits for every other's): the
-- herald wakes consumers (sql/internal/87_herald.sql).
CREATE OR REPLACE FUNCTION tributary.receiver_store(p_requests int[], p_sources int[], p_keys text[],
                                                    p_payloads jsonb)
RETURNS TABLE (request int, stored bigint)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    v_accepting int[];
BEGIN
    IF cardinality(p_requests) IS DISTINCT FROM cardinality(p_sources)
       OR cardinality(p_requests) IS DISTINCT FROM cardinality(p_keys)
       OR cardinality(p_requests) IS DISTINCT FROM jsonb_array_length(p_payloads) THEN
        RAISE EXCEPTION 'receiver_store: arrays of different lengths' USING ERRCODE = '22023';
    END IF;
    -- On Citus the writes below run on the workers, in sessions Citus
    -- opened there without this session's settings. Propagated, a SET LOCAL
    -- goes with the BEGIN Citus sends each worker: lock_timeout, so that a
    -- lock held there (a prepared transaction awaiting Citus' recovery)
    -- fails the commit after 5 s, as on one PostgreSQL; synchronous_commit,
    -- so that a commit on one worker (not prepared, which is always flushed)
    -- is durable before the 2xx whatever that worker's default
    -- (docs/citus.md).
    IF tributary.log_is_distributed() THEN
        SET LOCAL citus.propagate_set_commands = 'local';
        SET LOCAL lock_timeout = '5s';
        SET LOCAL synchronous_commit = on;
    END IF;
    -- READ UNCOMMITTED is READ COMMITTED in PostgreSQL: a snapshot per statement.
    IF current_setting('transaction_isolation') IN ('read committed', 'read uncommitted') THEN
        PERFORM pg_advisory_xact_lock_shared(1953655138, -s.id)
           FROM (SELECT DISTINCT u.id FROM unnest(p_sources) u(id) WHERE u.id IS NOT NULL ORDER BY u.id) s;
        SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') INTO v_accepting
          FROM tributary.sources s
         WHERE s.id IN (SELECT DISTINCT unnest(p_sources)) AND s.kind = 'push' AND s.enabled;
    ELSE
        SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') INTO v_accepting
          FROM (SELECT s.id FROM tributary.sources s
                 WHERE s.id IN (SELECT DISTINCT unnest(p_sources)) AND s.kind = 'push' AND s.enabled
                 ORDER BY s.id
                   FOR KEY SHARE) s;
    END IF;
    RETURN QUERY
    WITH input AS (
        SELECT i.request, i.source_id, i.key, i.payload, i.n
          FROM ROWS FROM (unnest(p_requests), unnest(p_sources), unnest(p_keys), jsonb_array_elements(p_payloads))
               WITH ORDINALITY AS i(request, source_id, key, payload, n)
    ), inserted AS (
        -- The keys first (tributary.event_keys): a receiver storing the
        -- same key waits for this transaction, and stores nothing if it
        -- commits.
        INSERT INTO tributary.event_keys (source_id, event_key)
        SELECT i.source_id, i.key FROM input i
         WHERE i.source_id = ANY (v_accepting)
         ORDER BY i.n
            ON CONFLICT DO NOTHING
        RETURNING source_id, event_key
    ), firsts AS (
        -- A key twice in one call is stored once, for its first request.
        SELECT DISTINCT ON (i.source_id, i.key) i.source_id, i.key, i.request, i.payload, i.n
          FROM input i
         ORDER BY i.source_id, i.key, i.n
    ), stored AS (
        INSERT INTO tributary.events (source_id, event_key, payload)
        SELECT f.source_id, f.key, f.payload
          FROM firsts f JOIN inserted e ON e.source_id = f.source_id AND e.event_key = f.key
         ORDER BY f.n
    ), credited AS (
        SELECT f.request, count(*) AS n
          FROM inserted e JOIN firsts f ON f.source_id = e.source_id AND f.key = e.event_key
         GROUP BY f.request
    )
    SELECT r.request, CASE WHEN r.source_id = ANY (v_accepting) THEN coalesce(c.n, 0) END
      FROM (SELECT DISTINCT i.request, i.source_id FROM input i) r
      LEFT JOIN credited c ON c.request = r.request
     ORDER BY r.request;
END $$;
