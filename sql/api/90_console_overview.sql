-- The console's overview (issue 17; docs/console.md): GET /api/overview,
-- one jsonb document.
--
-- Public API (sql/api/): the console's role (tributary_console) may execute the
-- console_* functions only. Errors a caller can fix carry SQLSTATE 22023
-- (bad argument: 400) or P0002 (no such source or group: 404).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): the console
-- reads no table itself, and never a header value or a URL's query.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- {"now", "rate", "sources", "groups", "log", "attention"}: events stored
-- per minute in the last hour (log_minutes, folded by the maintainer), the
-- sources by state, the 10 groups most behind (by oldest unprocessed age),
-- the log's size, and what needs a person, most urgent kinds first, at most
-- 50 items (failing sources at most 20):
--   failing_source    a pulled source in state failing (since: the start of
--                     its errors since its last success)
--   foreign_lock      a session holding a source's lock that is no loader
--   open_transaction  the oldest open transaction, open for more than 60 s:
--                     no consumer sees events stored after it began
--   no_maintainer     no maintainer holds the lease (never, or it expired)
--   default_partition events went to the default partition
--   archive_failing   partitions whose archive command failed
--   retention_held    a group holds partitions retention would drop
--   dead_letters      a group has dead letters (since: the oldest)
-- Each group's backlog is counted once, up to console_list_cap()
-- (console_group_status: events_behind_capped), the log's state read once
-- (log_status).
-- Called by: the console, GET /api/overview.
CREATE OR REPLACE FUNCTION tributary.console_overview() RETURNS jsonb
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_log record;
    v_sources jsonb;
    v_groups jsonb;
    v_attention jsonb := '[]';
    v_through timestamptz;
BEGIN
    SELECT * INTO v_log FROM tributary.log_status();
    SELECT p.through INTO v_through FROM tributary.activity_position p;

    SELECT jsonb_build_object(
               'total', count(*),
               'by_state', jsonb_build_object(
                   'ok', count(*) FILTER (WHERE st = 'ok'), 'transient', count(*) FILTER (WHERE st = 'transient'),
                   'throttled', count(*) FILTER (WHERE st = 'throttled'),
                   'failing', count(*) FILTER (WHERE st = 'failing'), 'paused', count(*) FILTER (WHERE st = 'paused'),
                   'pushed', count(*) FILTER (WHERE st = 'pushed'),
                   'published', count(*) FILTER (WHERE st = 'published')))
      INTO v_sources
      FROM (SELECT tributary.console_state(s.kind, s.enabled, g.state) AS st
              FROM tributary.sources s LEFT JOIN tributary.gates g ON g.source_id = s.id) x;

    WITH gs AS MATERIALIZED (SELECT * FROM tributary.console_group_status(NULL, tributary.console_list_cap())),
         behind AS (
             SELECT gs.* FROM gs
              WHERE gs.events_behind > 0 OR gs.oldest_unprocessed_age IS NOT NULL OR gs.dead_letters > 0
              ORDER BY gs.oldest_unprocessed_age DESC NULLS LAST, gs.events_behind DESC, gs.name
              LIMIT 10),
         dead AS (
             SELECT gs.name, gs.dead_letters,
                    (SELECT min(d.failed_at) FROM tributary.consumer_dead_letters d
                       JOIN tributary.consumer_groups cg ON cg.id = d.group_id WHERE cg.name = gs.name) AS since
               FROM gs WHERE gs.dead_letters > 0)
    SELECT jsonb_build_object(
               'total', (SELECT count(*) FROM gs),
               'behind', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                                     'name', b.name, 'events_behind', coalesce(b.events_behind, 0),
                                     'events_behind_capped', coalesce(b.events_behind_capped, false),
                                     'oldest_unprocessed_age', tributary.console_seconds(b.oldest_unprocessed_age),
                                     'dead_letters', coalesce(b.dead_letters, 0))
                                   ORDER BY b.oldest_unprocessed_age DESC NULLS LAST, b.events_behind DESC, b.name),
                                   '[]') FROM behind b)),
           (SELECT coalesce(jsonb_agg(jsonb_build_object(
                       'kind', 'dead_letters', 'subject', d.name,
                       'detail', d.dead_letters || ' dead letter(s): replay them from the group''s page once the '
                                 'consumer is fixed',
                       'since', tributary.console_time(d.since)) ORDER BY d.since, d.name), '[]') FROM dead d)
      INTO v_groups, v_attention;

    v_attention := (
        -- failing sources, at most 20, longest failing first
        SELECT coalesce(jsonb_agg(f.item ORDER BY f.since NULLS LAST, f.name), '[]')
          FROM (SELECT s.name, fs.since,
                       jsonb_build_object('kind', 'failing_source', 'subject', s.name,
                                          'detail', coalesce(g.last_error, 'failing'),
                                          'since', tributary.console_time(fs.since)) AS item
                  FROM tributary.gates g
                  JOIN tributary.sources s ON s.id = g.source_id
                  CROSS JOIN LATERAL (SELECT coalesce(min(e.first_at), g.last_error_at) AS since
                                        FROM tributary.source_errors e
                                       WHERE e.source_id = g.source_id
                                         AND e.first_at >= coalesce(g.last_success_at, '-infinity')) fs
                 WHERE g.state = 'failing' AND s.enabled
                 ORDER BY fs.since NULLS LAST, s.name
                 LIMIT 20) f)
     || (SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'kind', 'foreign_lock', 'subject', l.source,
                    'detail', format('session %s (user %s, application %s) holds its lock: %s', l.pid,
                                     coalesce(l.holder_user, '?'), coalesce(nullif(l.application, ''), '?'), l.reason),
                    'since', tributary.console_time(l.since)) ORDER BY l.source, l.pid), '[]')
           FROM tributary.foreign_locks l)
     || CASE WHEN v_log.oldest_xact_age_seconds > 60 THEN
            jsonb_build_array(jsonb_build_object(
                'kind', 'open_transaction', 'subject', 'pid ' || v_log.oldest_xact_pid,
                'detail', format('a transaction of %s (%s, %s) has been open for %s s: consumers see no event '
                                 'stored after it began until it ends',
                                 coalesce(v_log.oldest_xact_user, '?'),
                                 coalesce(nullif(v_log.oldest_xact_application, ''), '?'),
                                 coalesce(v_log.oldest_xact_state, '?'), round(v_log.oldest_xact_age_seconds::numeric)),
                'since', tributary.console_time(clock_timestamp()
                                                - make_interval(secs => v_log.oldest_xact_age_seconds))))
        ELSE '[]' END
     || CASE WHEN v_log.maintainer_holder IS NULL OR v_log.maintainer_expires_in_seconds < 0 THEN
            jsonb_build_array(jsonb_build_object(
                'kind', 'no_maintainer', 'subject', 'maintainer',
                'detail', CASE WHEN v_log.maintainer_holder IS NULL
                               THEN 'no maintainer has ever held the lease: run `tributary maintain` (or `run`)'
                               ELSE 'the maintainer''s lease (last held by ' || v_log.maintainer_holder
                                    || ') has expired: partitions are not created ahead, nothing is dropped' END,
                'since', NULL))
        ELSE '[]' END
     || CASE WHEN v_log.default_events > 0 THEN
            jsonb_build_array(jsonb_build_object(
                'kind', 'default_partition', 'subject', 'events_default',
                'detail', v_log.default_events || CASE WHEN v_log.default_events >= 1000 THEN ' or more' ELSE '' END
                          || ' event(s) in the default partition: no partition covered their transaction; '
                          || '`tributary log repartition` moves them into partitions of their own',
                'since', NULL))
        ELSE '[]' END
     || CASE WHEN v_log.archive_failing > 0 THEN
            jsonb_build_array(jsonb_build_object(
                'kind', 'archive_failing', 'subject', v_log.archive_failing_partition,
                'detail', v_log.archive_failing || ' partition(s) failed to archive: ' || coalesce(v_log.archive_error, ''),
                'since', NULL))
        ELSE '[]' END
     || (SELECT coalesce(jsonb_agg(jsonb_build_object(
                    'kind', 'retention_held', 'subject', h ->> 'group',
                    'detail', format('holds back %s partition(s) (%s bytes) past their retention',
                                     h ->> 'partitions', h ->> 'bytes'),
                    'since', NULL) ORDER BY h ->> 'group'), '[]')
           FROM jsonb_array_elements(v_log.held) h)
     || v_attention;

    RETURN jsonb_build_object(
        'now', tributary.console_time(clock_timestamp()),
        'rate', tributary.console_minutes(NULL),
        'sources', v_sources,
        'groups', v_groups,
        'log', jsonb_build_object('bytes', v_log.bytes, 'partitions', v_log.partitions,
                                  'oldest_event_at', tributary.console_time(v_log.oldest_event_at),
                                  'activity_through', tributary.console_time(v_through)),
        'attention', (SELECT coalesce(jsonb_agg(a.item ORDER BY a.n), '[]')
                        FROM jsonb_array_elements(v_attention) WITH ORDINALITY a(item, n) WHERE a.n <= 50));
END $$;
