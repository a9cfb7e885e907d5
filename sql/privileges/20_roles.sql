-- The six group roles (NOLOGIN; `migrate` creates them when it may, and
-- `tributary grant ROLE USER` makes a login role a member) and exactly what
-- each needs. A role that does not exist is skipped; `migrate` applies this
-- again once it does.
--
--   tributary_loader    `run` (and `status`): reads sources with their URLs
--                       and headers, moves gates and cursors, appends events.
--   tributary_consumer  `consume`, `tail`, the consumer_* functions and
--                       read_log: never a URL or a header, never a write
--                       outside its own group's batches (which the API does).
--   tributary_admin     `source`, `group`, `dlq`, `status`: manages sources
--                       (secrets included) and groups.
--   tributary_receiver  `receive`: reads the pushed sources' names and how
--                       they are authenticated (variable names, never
--                       values), stores through receiver_store only.
--   tributary_publisher applications: may call publish, which stores only to
--                       a published source whose publishers include one of
--                       the login role's roles; reads nothing.
--   tributary_maintainer `maintain`, and `run` taking part in the election:
--                       the maintainer's lease and the functions of its
--                       pass (partitions ahead, observation); no table.
--   tributary_console   `console`: the console_* functions (documents
--                       without header values or URL queries, and its
--                       actions) and, for the live tail, read_log and
--                       log_position (read_log_lanes and
--                       log_lane_positions on Citus); no table.
--
-- The public functions the consumer and the admin call run as their owner
-- (SECURITY DEFINER, sql/api/): these roles get EXECUTE on them, not the
-- tables behind them. The loader's functions run with the loader's rights:
-- it holds the table privileges they use anyway (it COPYs into events).
-- Every role reads the migrator's bookkeeping: each command checks the
-- schema before it starts.
--
-- Privileges (sql/privileges/): see 10_public.sql.

DO $$
DECLARE
    v_role text;
BEGIN
    IF to_regrole('tributary_loader') IS NOT NULL THEN
        -- From nothing, so that this file is the whole truth.
        REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM tributary_loader;
        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM tributary_loader;
        GRANT USAGE ON SCHEMA tributary TO tributary_loader;
        GRANT SELECT ON tributary.schema_migrations, tributary.schema_definitions TO tributary_loader;
        GRANT SELECT ON tributary.sources TO tributary_loader;
        -- `status` (run with the loader's role) shows what holds retention back.
        GRANT EXECUTE ON FUNCTION tributary.partition_retention() TO tributary_loader;
        -- ... and the log's state (sql/internal/83_log_status.sql), also for run's metrics.
        GRANT EXECUTE ON FUNCTION tributary.log_status(), tributary.log_partitions() TO tributary_loader;
        -- The lanes not read (17_shard_moves.sql) and the workers' transactions (83_log_status.sql), on Citus.
        GRANT EXECUTE ON FUNCTION tributary.shard_list(), tributary.worker_transactions() TO tributary_loader;
        GRANT SELECT, UPDATE ON tributary.gates, tributary.cursors TO tributary_loader;
        GRANT INSERT ON tributary.events TO tributary_loader;
        -- A replay after `source rewind` asks which ids the log has already.
        GRANT SELECT (source_id, event_id) ON tributary.events TO tributary_loader;
        -- Keys of sources keyed by text (migration 0013): stored first, and
        -- the new ones read back (RETURNING).
        GRANT SELECT, INSERT ON tributary.event_keys TO tributary_loader;
        -- A failed close records the source's error episode (migration 0014).
        -- (Not yet when migration 0013 applies these definitions, before 0014 exists.)
        IF to_regclass('tributary.source_errors') IS NOT NULL THEN
            GRANT SELECT, INSERT, UPDATE, DELETE ON tributary.source_errors TO tributary_loader;
        END IF;
        -- `status` and the loader's warning name sessions that hold a source's lock.
        GRANT SELECT ON tributary.foreign_locks TO tributary_loader;
        GRANT SELECT ON tributary.cursor_rewinds TO tributary_loader;
        -- OAuth2 tokens it fetches and shares (migration 0009): no other role
        -- reads them, not even the admin, who holds only the variables' names.
        GRANT SELECT, INSERT, UPDATE ON tributary.access_tokens TO tributary_loader;
        GRANT EXECUTE ON FUNCTION
            tributary.loader_claim(int, int, bigint),
            tributary.loader_claim(int, int, bigint, bigint),
            tributary.loader_gate_succeeded(int, int, bigint, bigint, bigint, boolean, bigint),
            tributary.loader_close_succeeded(int, int, bigint, bigint, bigint, boolean, bigint),
            tributary.loader_close_failed(int, int, bigint, bigint, text, text),
            tributary.loader_close_released(int, int, bigint, bigint),
            tributary.loader_append(int, bigint, bigint[], jsonb, int, bigint, bigint, bigint),
            tributary.loader_append_keyed(int, text, bigint, text, bigint, jsonb, jsonb, int, bigint, bigint,
                                          boolean, bigint, bigint),
            tributary.loader_append_replay(int, bigint, bigint[], jsonb, int, bigint, bigint, bigint),
            -- run's POST /sources/NAME/nudge.
            tributary.nudge_gate(text),
            -- Whether to take a source's lock on the Citus coordinator (sql/citus/10_delegation.sql).
            tributary.log_is_distributed(),
            -- A shared OAuth2 token's refresher lease (sql/internal/56_access_tokens.sql).
            tributary.access_token_claim(int, bigint, double precision)
            TO tributary_loader;
    END IF;

    IF to_regrole('tributary_consumer') IS NOT NULL THEN
        -- From nothing, so that this file is the whole truth.
        REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM tributary_consumer;
        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM tributary_consumer;
        GRANT USAGE ON SCHEMA tributary TO tributary_consumer;
        GRANT SELECT ON tributary.schema_migrations, tributary.schema_definitions TO tributary_consumer;
        -- Names for patterns; never url or headers.
        GRANT SELECT (id, name, kind, enabled, created_at) ON tributary.sources TO tributary_consumer;
        GRANT SELECT ON tributary.group_status, tributary.dead_letters TO tributary_consumer;
        GRANT EXECUTE ON FUNCTION
            tributary.consumer_read(text, text, int),
            tributary.consumer_next(text, text, int, bigint, uuid),
            tributary.consumer_ack(bigint, uuid, bigint[], text),
            tributary.consumer_fail(bigint, uuid, text),
            tributary.consumer_extend(bigint, uuid, interval),
            tributary.consumer_leave(text, text),
            tributary.consumer_awaits_lanes(text, text),
            tributary.read_log(text, xid8, bigint, int),
            tributary.log_position(text),
            tributary.read_log_lanes(text, xid8[], bigint[], int),
            tributary.log_lane_positions(text),
            tributary.pattern_matches(text, text),
            tributary.group_backlog(tributary.consumer_groups),
            tributary.lanes_of(tributary.consumer_groups),
            tributary.lanes_in_place(),
            tributary.unheld_lanes(tributary.consumer_groups),
            tributary.group_lanes_status(text),
            -- The views group_status and dead_letters are these functions'
            -- rows (their caller's rights).
            tributary.group_status_of(text),
            tributary.group_lease(text),
            tributary.dead_letters_of(text),
            tributary.tx_from(xid8),
            tributary.tx_to(xid8)
            TO tributary_consumer;
    END IF;

    IF to_regrole('tributary_admin') IS NOT NULL THEN
        -- From nothing, so that this file is the whole truth.
        REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM tributary_admin;
        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM tributary_admin;
        GRANT USAGE ON SCHEMA tributary TO tributary_admin;
        GRANT SELECT ON tributary.schema_migrations, tributary.schema_definitions TO tributary_admin;
        GRANT SELECT, INSERT, UPDATE, DELETE ON tributary.sources TO tributary_admin;
        -- A new source's cursor (`source add --after-id`) and gate; `source
        -- remove` locks the cursor row and checks for events.
        GRANT SELECT, INSERT, UPDATE ON tributary.cursors TO tributary_admin;
        GRANT SELECT, INSERT ON tributary.gates TO tributary_admin;
        -- `source rewind` records who moved a cursor back; `status` shows it.
        GRANT SELECT, INSERT ON tributary.cursor_rewinds TO tributary_admin;
        GRANT SELECT ON tributary.events TO tributary_admin;
        GRANT SELECT ON tributary.consumer_groups, tributary.consumer_batches, tributary.consumer_retries,
                        tributary.consumer_dead_letters TO tributary_admin;
        GRANT SELECT ON tributary.group_status, tributary.dead_letters TO tributary_admin;
        GRANT SELECT ON tributary.foreign_locks TO tributary_admin;
        -- The log's partitions, how it is cut and kept, its maintainer (0013).
        GRANT SELECT ON tributary.partitions, tributary.log_settings, tributary.retention_policies,
                        tributary.maintainer_lease TO tributary_admin;
        -- ... and who announces it (0016; not yet when an older migration applies these).
        IF to_regclass('tributary.herald_lease') IS NOT NULL THEN
            GRANT SELECT ON tributary.herald_lease TO tributary_admin;
        END IF;
        GRANT EXECUTE ON FUNCTION
            tributary.group_create(text, text, text, int, interval, boolean, int),
            tributary.group_reset(text, text),
            tributary.group_delete(text),
            tributary.dead_letter_replay(text, bigint),
            tributary.read_log(text, xid8, bigint, int),
            tributary.log_position(text),
            tributary.read_log_lanes(text, xid8[], bigint[], int),
            tributary.log_lane_positions(text),
            tributary.pattern_matches(text, text),
            tributary.group_backlog(tributary.consumer_groups),
            tributary.lanes_of(tributary.consumer_groups),
            tributary.lanes_in_place(),
            tributary.unheld_lanes(tributary.consumer_groups),
            tributary.group_lanes_status(text),
            tributary.group_status_of(text),
            tributary.group_lease(text),
            tributary.dead_letters_of(text),
            tributary.tx_from(xid8),
            tributary.tx_to(xid8)
            TO tributary_admin;
        -- What `source add` and `source remove` do besides their change where the
        -- triggers on sources are gone (Citus; sql/internal/60_source_triggers.sql).
        GRANT EXECUTE ON FUNCTION tributary.sources_changed(), tributary.refuse_removing(int, text)
            TO tributary_admin;
        -- `source edit` (sql/api/86_source_edit.sql) and its record (migration 0015).
        -- (Not yet when an earlier migration applies these definitions, before 0015 exists.)
        IF to_regclass('tributary.source_edits') IS NOT NULL THEN
            GRANT EXECUTE ON FUNCTION
                tributary.source_edit(text, int, text, text[], int, int, int, jsonb, text)
                TO tributary_admin;
            GRANT SELECT ON tributary.source_edits TO tributary_admin;
        END IF;
        -- `retention set|list|remove`; `status` and `group list` show what holds retention back
        -- (sql/api/85_retention.sql, sql/internal/82_retention.sql).
        GRANT EXECUTE ON FUNCTION
            tributary.retention_set(text, interval, bigint, boolean, boolean),
            tributary.retention_remove(text),
            tributary.partition_retention(),
            tributary.log_status(),
            tributary.log_partitions(),
            tributary.shard_list(),
            tributary.worker_transactions()
            TO tributary_admin;
        -- `tributary log repartition` (sql/internal/86_default_partition.sql; SECURITY DEFINER).
        GRANT EXECUTE ON FUNCTION tributary.repartition_default(int, xid8), tributary.default_partition_left()
            TO tributary_admin;
    END IF;

    IF to_regrole('tributary_receiver') IS NOT NULL THEN
        -- From nothing, so that this file is the whole truth.
        REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM tributary_receiver;
        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM tributary_receiver;
        GRANT USAGE ON SCHEMA tributary TO tributary_receiver;
        GRANT SELECT ON tributary.schema_migrations, tributary.schema_definitions TO tributary_receiver;
        -- Never url, headers or publishers.
        GRANT SELECT (id, name, kind, enabled, reading, receiving) ON tributary.sources TO tributary_receiver;
        GRANT EXECUTE ON FUNCTION tributary.receiver_store(int[], int[], text[], jsonb) TO tributary_receiver;
    END IF;

    IF to_regrole('tributary_publisher') IS NOT NULL THEN
        -- From nothing, so that this file is the whole truth.
        REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM tributary_publisher;
        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM tributary_publisher;
        GRANT USAGE ON SCHEMA tributary TO tributary_publisher;
        GRANT EXECUTE ON FUNCTION tributary.publish(text, text, jsonb), tributary.publish(text, jsonb)
            TO tributary_publisher;
    END IF;

    IF to_regrole('tributary_maintainer') IS NOT NULL THEN
        -- From nothing, so that this file is the whole truth.
        REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM tributary_maintainer;
        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM tributary_maintainer;
        GRANT USAGE ON SCHEMA tributary TO tributary_maintainer;
        GRANT SELECT ON tributary.schema_migrations, tributary.schema_definitions TO tributary_maintainer;
        -- All SECURITY DEFINER (sql/internal/80_partitions.sql, 81_maintainer.sql).
        GRANT EXECUTE ON FUNCTION
            tributary.maintainer_acquire(text, interval),
            tributary.maintainer_release(text, bigint),
            tributary.maintainer_fence(text, bigint),
            tributary.observe_partitions(),
            tributary.partitions_ahead()
            TO tributary_maintainer;
        -- The retention step (sql/internal/82_retention.sql): what each partition's state is, the
        -- archive's COPY statement, recording an archive, dropping (the changes fenced by its lease;
        -- all SECURITY DEFINER). The archive's COPY itself reads the log as this role: SELECT on
        -- events (over the partition's range; the partitions themselves stay unreadable).
        GRANT EXECUTE ON FUNCTION
            tributary.partition_retention(),
            tributary.archive_copy_statement(text, text),
            tributary.retention_archived(text, bigint, text),
            tributary.retention_archive_failed(text, bigint, text, text),
            tributary.retention_drop(text, bigint, text)
            TO tributary_maintainer;
        GRANT SELECT ON tributary.events TO tributary_maintainer;
        -- `maintain --metrics-listen`: the log's state (sql/internal/83_log_status.sql).
        GRANT EXECUTE ON FUNCTION tributary.log_status(), tributary.log_partitions() TO tributary_maintainer;
        -- The lanes not read (17_shard_moves.sql) and the workers' transactions (83_log_status.sql), on Citus.
        GRANT EXECUTE ON FUNCTION tributary.shard_list(), tributary.worker_transactions() TO tributary_maintainer;
        -- The console's per-minute counts (sql/internal/84_activity.sql; SECURITY DEFINER).
        GRANT EXECUTE ON FUNCTION tributary.activity_fold(int) TO tributary_maintainer;
        -- `tributary log repartition` (sql/internal/86_default_partition.sql; SECURITY DEFINER).
        GRANT EXECUTE ON FUNCTION tributary.repartition_default(int, xid8), tributary.default_partition_left()
            TO tributary_maintainer;
    END IF;

    IF to_regrole('tributary_console') IS NOT NULL THEN
        -- From nothing, so that this file is the whole truth.
        REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM tributary_console;
        REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM tributary_console;
        GRANT USAGE ON SCHEMA tributary TO tributary_console;
        GRANT SELECT ON tributary.schema_migrations, tributary.schema_definitions TO tributary_console;
        -- All SECURITY DEFINER (sql/api/90_console_overview.sql .. 94_console_actions.sql).
        GRANT EXECUTE ON FUNCTION
            tributary.console_overview(),
            tributary.console_sources(text, text, text, boolean, int, int),
            tributary.console_source(text),
            tributary.console_groups(),
            tributary.console_group(text, int, int),
            tributary.console_keep_group_matches(text),
            tributary.console_pause(text),
            tributary.console_resume(text),
            tributary.console_nudge(text),
            tributary.console_replay(text, bigint),
            tributary.console_reset(text, text)
            TO tributary_console;
        -- The live tail reads the log as `tail` does (sql/api/21_read_log.sql).
        GRANT EXECUTE ON FUNCTION tributary.read_log(text, xid8, bigint, int), tributary.log_position(text),
            tributary.read_log_lanes(text, xid8[], bigint[], int), tributary.log_lane_positions(text)
            TO tributary_console;
    END IF;

    -- The herald (sql/internal/87_herald.sql): `run`, `receive`, `maintain` and `consume` each
    -- compete for its lease. Its functions reveal only whether some event became readable; and
    -- whether the log is distributed, which sets the herald's default beat (docs/citus.md).
    FOR v_role IN SELECT r FROM unnest(ARRAY['tributary_loader', 'tributary_receiver', 'tributary_maintainer',
                                             'tributary_consumer']) r
                   WHERE to_regrole(r) IS NOT NULL LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION tributary.herald_acquire(text, interval), '
                       'tributary.herald_release(text, bigint), tributary.herald_announce(text, bigint, xid8), '
                       'tributary.herald_announce_nodes(text, bigint, xid8[]), tributary.log_is_distributed() TO %I',
                       v_role);
    END LOOP;
END $$;
