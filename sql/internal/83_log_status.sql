-- The log's state at a glance (issue 16, observability): what `tributary
-- status`, `tributary log` and the log's metrics show, so that an operator
-- sees what needs a person before the disk or the transaction counter does.
--
-- Internal (sql/internal/): called by `status`, `log` and the metrics of
-- `run --listen` and `maintain --metrics-listen`. They run as their owner
-- (SECURITY DEFINER; search_path pinned): the loader, the admin and the
-- maintainer may execute them (sql/privileges/20_roles.sql) without
-- reading the catalogue or the events themselves.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- One row:
--   partitions          the log's partitions (events_0 and those ahead
--                       included, the default partition not)
--   bytes, key_bytes    on disk (indexes and TOAST included): the partitions
--                       with the default one; the keys of text-keyed events
--                       (on Citus: their shards on the workers)
--   default_events      events in the default partition, counted up to
--                       1000 (it should be 0: they went there because no
--                       partition covered their transaction)
--   oldest_event_at     loaded_at of the first event in read order (one
--                       probe of each partition's (tx_id, seq) index; on
--                       Citus the oldest of each shard's first)
--   ahead_to_tx         the end of the last partition; ahead_xids the ids
--                       left before it (on Citus: before the fastest
--                       worker reaches it), ahead_seconds how long they last at
--                       the measured rate (NULL before a rate is known)
--   next_drop_*         the first partition retention drops: one that is
--                       due or waits for the archive now (seconds 0), else
--                       the earliest due_at of those waiting
--   archive_failing     partitions whose last archive attempt failed, with
--                       the latest failure's partition and error
--   held                [{group, partitions, bytes}]: groups that hold back
--                       partitions retention would drop (state 'held')
--   oldest_xact_*       the oldest open transaction of the cluster that has
--                       a transaction id or a snapshot, among the sessions
--                       the function's owner may see (pg_stat_activity hides
--                       other roles' xact_start unless it is a superuser or
--                       has pg_read_all_stats); this call's own excluded
--   xmin_lag_xids       how many transaction ids the cluster's oldest still
--                       needed id (running transactions, snapshots of every
--                       session, prepared transactions, replication slots)
--                       lags the counter: vacuum removes nothing newer
--   maintainer_*        the lease: holder, token, seconds until it expires
--                       (negative: expired; NULL: never held)
--   herald_*            the herald's lease (migration 0016), the same
--                       (sql/internal/87_herald.sql)

-- log_status gained the herald_* columns (issue 27). A database whose
-- log_status returns the older row gets it anew.
DO $$
BEGIN
    IF to_regprocedure('tributary.log_status()') IS NOT NULL
       AND NOT EXISTS (SELECT FROM pg_proc WHERE oid = to_regprocedure('tributary.log_status()')
                          AND 'herald_holder' = ANY (proargnames)) THEN
        DROP FUNCTION tributary.log_status();
    END IF;
END $$;

CREATE OR REPLACE FUNCTION tributary.log_status(
    OUT partitions int, OUT bytes bigint, OUT key_bytes bigint, OUT default_events bigint,
    OUT oldest_event_at timestamptz, OUT oldest_event_age_seconds double precision,
    OUT ahead_to_tx xid8, OUT ahead_xids numeric, OUT xids_per_second double precision,
    OUT ahead_seconds double precision,
    OUT next_drop_partition text, OUT next_drop_state text, OUT next_drop_at timestamptz,
    OUT next_drop_seconds double precision,
    OUT archive_failing int, OUT archive_failing_partition text, OUT archive_error text,
    OUT held jsonb,
    OUT oldest_xact_pid int, OUT oldest_xact_user text, OUT oldest_xact_application text,
    OUT oldest_xact_state text, OUT oldest_xact_age_seconds double precision,
    OUT xmin_lag_xids numeric,
    OUT maintainer_holder text, OUT maintainer_token bigint, OUT maintainer_expires_in_seconds double precision,
    OUT herald_holder text, OUT herald_token bigint, OUT herald_expires_in_seconds double precision)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_next xid8 := tributary.log_next_xid();
BEGIN
    SELECT count(*)::int, max(p.to_tx) INTO partitions, ahead_to_tx FROM tributary.partitions p;
    IF tributary.log_is_distributed() THEN
        -- Citus: the shards on the workers (the coordinator's tables are empty shells), and the
        -- oldest of each shard's first event in its worker's read order.
        SELECT coalesce(sum(citus_total_relation_size(i.inhrelid)), 0)::bigint INTO bytes
          FROM pg_inherits i WHERE i.inhparent = 'tributary.events'::regclass;
        key_bytes := citus_total_relation_size('tributary.event_keys'::regclass);
        SELECT min(r.result::timestamptz) INTO oldest_event_at
          FROM run_command_on_shards('tributary.events',
                                     'SELECT e.loaded_at FROM %s e ORDER BY e.tx_id, e.seq LIMIT 1') r
         WHERE r.success AND r.result <> '';
    ELSE
        SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint INTO bytes
          FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
         WHERE i.inhparent = 'tributary.events'::regclass;
        key_bytes := pg_total_relation_size('tributary.event_keys'::regclass);
        oldest_event_at := (SELECT e.loaded_at FROM tributary.events e ORDER BY e.tx_id, e.seq LIMIT 1);
    END IF;
    default_events := (SELECT count(*) FROM (SELECT 1 FROM tributary.events_default LIMIT 1000) d);
    oldest_event_age_seconds := extract(epoch FROM clock_timestamp() - oldest_event_at);

    ahead_xids := greatest(tributary.xid_minus(ahead_to_tx, v_next), 0);
    xids_per_second := (SELECT s.xids_per_second FROM tributary.log_settings s);
    ahead_seconds := CASE WHEN xids_per_second > 0 THEN ahead_xids / xids_per_second END;

    WITH r AS MATERIALIZED (SELECT * FROM tributary.partition_retention()),
         next_drop AS (
             SELECT r.name, r.state, CASE WHEN r.state IN ('due', 'archive') THEN now() ELSE r.due_at END AS at
               FROM r
              WHERE r.state IN ('due', 'archive') OR (r.state = 'waiting' AND r.due_at IS NOT NULL)
              ORDER BY r.state NOT IN ('due', 'archive'), at, r.from_tx
              LIMIT 1),
         holding AS (
             SELECT g.name AS "group", count(*) AS partitions, coalesce(sum(r.bytes), 0) AS bytes
               FROM r, unnest(r.held_by) g(name)
              WHERE r.state = 'held'
              GROUP BY g.name)
    SELECT (SELECT n.name FROM next_drop n), (SELECT n.state FROM next_drop n), (SELECT n.at FROM next_drop n),
           (SELECT coalesce(jsonb_agg(to_jsonb(h) ORDER BY h."group"), '[]') FROM holding h)
      INTO next_drop_partition, next_drop_state, next_drop_at, held;
    -- greatest() skips a NULL: without a next drop there is no figure, not 0.
    next_drop_seconds := CASE WHEN next_drop_at IS NOT NULL
                              THEN greatest(extract(epoch FROM next_drop_at - clock_timestamp()), 0) END;

    SELECT count(*) FILTER (WHERE p.archive_error IS NOT NULL)::int INTO archive_failing
      FROM tributary.partitions p;
    SELECT p.name, p.archive_error INTO archive_failing_partition, archive_error
      FROM tributary.partitions p WHERE p.archive_error IS NOT NULL
     ORDER BY p.archive_failed_at DESC NULLS LAST LIMIT 1;

    SELECT a.pid, a.usename::text, a.application_name, a.state,
           extract(epoch FROM clock_timestamp() - a.xact_start)
      INTO oldest_xact_pid, oldest_xact_user, oldest_xact_application, oldest_xact_state, oldest_xact_age_seconds
      FROM pg_stat_activity a
     WHERE (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
       AND a.xact_start IS NOT NULL AND a.pid <> pg_backend_pid()
     ORDER BY a.xact_start LIMIT 1;
    -- This node's own counter (on Citus the coordinator's: the workers' come from worker_transactions).
    SELECT greatest(tributary.xid_minus(tributary.next_xid(), pg_snapshot_xmin(pg_current_snapshot())),
                    (SELECT max(greatest(age(a.backend_xid), age(a.backend_xmin))) FROM pg_stat_activity a
                      WHERE a.pid <> pg_backend_pid()),
                    (SELECT max(age(x.transaction)) FROM pg_prepared_xacts x),
                    (SELECT max(greatest(age(s.xmin), age(s.catalog_xmin))) FROM pg_replication_slots s))
      INTO xmin_lag_xids;

    SELECT l.holder, l.token, l.expires_in_seconds
      INTO maintainer_holder, maintainer_token, maintainer_expires_in_seconds
      FROM tributary.lease_shown('tributary.maintainer_lease') l;
    SELECT l.holder, l.token, l.expires_in_seconds
      INTO herald_holder, herald_token, herald_expires_in_seconds
      FROM tributary.lease_shown('tributary.herald_lease') l;
END $$;

-- One row per partition, oldest first, the default partition last: what
-- retention makes of it (partition_retention) with the catalogue's times,
-- and its size now (the catalogue keeps it only once sealed; on Citus,
-- its shards' on the workers: partition_bytes).
CREATE OR REPLACE FUNCTION tributary.log_partitions()
RETURNS TABLE (name text, from_tx xid8, to_tx xid8, state text, bytes bigint, created_at timestamptz,
               started_at timestamptz, ended_at timestamptz, sealed_at timestamptz, due_at timestamptz,
               held_by text[], archive boolean, archived_at timestamptz, archive_failures int,
               archive_error text)
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
SELECT r.name, r.from_tx, r.to_tx, r.state,
       coalesce(r.bytes, tributary.partition_bytes(r.name)),
       p.created_at, p.started_at, r.ended_at, r.sealed_at, r.due_at, r.held_by, r.archive, r.archived_at,
       r.archive_failures, r.archive_error
  FROM tributary.partition_retention() r JOIN tributary.partitions p ON p.name = r.name
UNION ALL
SELECT 'events_default', NULL, NULL, 'default', coalesce(tributary.partition_bytes('events_default'), 0),
       NULL, NULL, NULL, NULL, NULL, '{}', false, NULL, 0, NULL $$;

-- Citus only: each worker's oldest open transaction (as log_status's
-- oldest_xact_*, on that worker), its oldest prepared transaction (a
-- two-phase commit waiting for its COMMIT PREPARED: it holds that
-- worker's watermark, so its lanes and the sealing of partitions, back),
-- and its xmin horizon's lag, read on every worker in one statement
-- (run_command_on_workers: connections of its own). log_status is the
-- coordinator's; `status`, `log` and the metrics show whichever node's
-- transaction is oldest, and the greatest lag. No row on one PostgreSQL,
-- nor for a worker that does not answer.
-- Called by: `status`, `log`, the metrics (src/postgres/postgres_log_status.cpp).
CREATE OR REPLACE FUNCTION tributary.worker_transactions()
RETURNS TABLE (node text, pid int, usename text, application text, state text, age_seconds double precision,
               prepared_gid text, prepared_age_seconds double precision, xmin_lag_xids numeric)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT tributary.log_is_distributed() THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT w.nodename || ':' || w.nodeport, (j ->> 'pid')::int, j ->> 'user', j ->> 'application', j ->> 'state',
           (j ->> 'age')::double precision, j ->> 'prepared_gid', (j ->> 'prepared_age')::double precision,
           (j ->> 'lag')::numeric
      FROM run_command_on_workers($c$
               SELECT jsonb_build_object(
                   'pid', a.pid, 'user', a.usename, 'application', a.application_name, 'state', a.state,
                   'age', extract(epoch FROM clock_timestamp() - a.xact_start),
                   'prepared_gid', x.gid, 'prepared_age', extract(epoch FROM clock_timestamp() - x.prepared),
                   'lag', greatest(pg_snapshot_xmax(pg_current_snapshot())::text::numeric
                                       - pg_snapshot_xmin(pg_current_snapshot())::text::numeric,
                                   (SELECT max(greatest(age(b.backend_xid), age(b.backend_xmin)))
                                      FROM pg_stat_activity b WHERE b.pid <> pg_backend_pid()),
                                   (SELECT max(age(p.transaction)) FROM pg_prepared_xacts p),
                                   (SELECT max(greatest(age(s.xmin), age(s.catalog_xmin)))
                                      FROM pg_replication_slots s)))
               FROM (SELECT 1) one
               LEFT JOIN LATERAL (SELECT * FROM pg_stat_activity a
                                   WHERE (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
                                     AND a.xact_start IS NOT NULL AND a.pid <> pg_backend_pid()
                                   ORDER BY a.xact_start LIMIT 1) a ON true
               LEFT JOIN LATERAL (SELECT * FROM pg_prepared_xacts p ORDER BY p.prepared LIMIT 1) x ON true $c$) w,
           LATERAL (SELECT CASE WHEN w.success THEN w.result::jsonb END AS j) r
     WHERE w.success;
END $$;
