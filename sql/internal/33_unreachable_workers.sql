-- A Citus worker that does not answer stops only its own lanes (issue 29;
-- docs/citus.md "A worker down").
--
-- A group's read goes to its lanes' workers in turn (lane_lease). When one
-- is down, Citus raises 08006 at its first lane, and the whole call would
-- fail: the lanes on the workers that answer would wait for it too. A
-- savepoint per lane could catch the failure where it happens, but Citus
-- sends each savepoint on to the workers the transaction uses (0.4-0.7 ms a
-- lane on the test cluster). So a call takes one savepoint
-- (lane_lease_guarded). When it catches a failure a worker going away can
-- cause, it asks every worker once (run_command_on_workers answers for each
-- node instead of raising), and remembers those that did not answer in the
-- session for kSkipSeconds (a setting of the session, the only state that
-- outlives the failed part of the call). It leases again without their
-- lanes; the session's later calls skip them without trying until then,
-- and try them again after. A skipped lane keeps its position: its events
-- wait, none is passed over.
-- The session setting tributary.unreachable_groups is 'GROUP@EPOCH,...':
-- a worker group and when to try it again (seconds since 1970).

-- The worker groups this session skips now (Citus only; '{}' when none).
-- Called by: unreachable_lanes, note_unreachable_workers.
CREATE OR REPLACE FUNCTION tributary.unreachable_groups() RETURNS int[]
LANGUAGE sql STABLE AS $$
SELECT coalesce(array_agg(split_part(e, '@', 1)::int), '{}')
  FROM unnest(string_to_array(nullif(current_setting('tributary.unreachable_groups', true), ''), ',')) e
 WHERE split_part(e, '@', 2)::float8 > extract(epoch FROM clock_timestamp()) $$;

-- The lanes whose recorded worker this session skips now ('{}' when none,
-- and always on one PostgreSQL: the setting is never made there).
-- Called by: lane_lease.
CREATE OR REPLACE FUNCTION tributary.unreachable_lanes() RETURNS int[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_groups int[] := CASE WHEN current_setting('tributary.unreachable_groups', true) <> ''
                           THEN tributary.unreachable_groups() ELSE '{}' END;
BEGIN
    IF cardinality(v_groups) = 0 THEN
        RETURN '{}';
    END IF;
    RETURN (SELECT coalesce(array_agg(l.lane), '{}') FROM tributary.citus_lanes l
             WHERE l.node_group = ANY (v_groups));
END $$;

-- After a failure a worker going away can cause: asks every worker, and
-- has the session skip those that do not answer (and are not skipped yet)
-- for 10 s. Says so in a WARNING, which the consumer logs. Returns how
-- many it added: 0 when every worker answered, and the failure was
-- something else.
-- Called by: lane_lease_guarded.
CREATE OR REPLACE FUNCTION tributary.note_unreachable_workers() RETURNS int
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    -- Long enough that a session does not try a dead worker at every call,
    -- short enough that a restarted one is read again soon.
    kSkipSeconds constant int := 10;
    v_skipped int[] := tributary.unreachable_groups();
    v_down record;
    v_entries text[] := '{}';
    v_added int := 0;
BEGIN
    FOR v_down IN SELECT n.groupid, w.nodename || ':' || w.nodeport AS node, w.result
                    FROM run_command_on_workers('SELECT 1') w
                    JOIN pg_dist_node n ON n.nodename = w.nodename AND n.nodeport = w.nodeport
                   WHERE NOT w.success AND n.noderole = 'primary' LOOP
        v_entries := v_entries || (v_down.groupid || '@' ||
                                   (extract(epoch FROM clock_timestamp()) + kSkipSeconds)::text);
        IF v_down.groupid <> ALL (v_skipped) THEN
            v_added := v_added + 1;
            RAISE WARNING 'Citus worker % does not answer (%): its lanes are skipped for % s, the others are read',
                v_down.node, v_down.result, kSkipSeconds;
        END IF;
    END LOOP;
    IF v_added > 0 THEN
        PERFORM set_config('tributary.unreachable_groups', array_to_string(v_entries, ','), false);
    END IF;
    RETURN v_added;
END $$;

-- lane_lease, guarded on Citus by one savepoint: a worker that does not
-- answer costs its own lanes, not the call (see above). On one PostgreSQL
-- it is lane_lease.
-- Called by: consumer_next, consumer_read.
CREATE OR REPLACE FUNCTION tributary.lane_lease_guarded(g tributary.consumer_groups, p_consumer text, p_max int,
                                                         OUT batch tributary.consumer_batches, OUT lane int,
                                                         OUT watermark xid8, OUT sources bit varying,
                                                         OUT names jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    v_lease record;
BEGIN
    IF NOT tributary.lanes_by_shard() THEN
        SELECT * INTO v_lease FROM tributary.lane_lease(g, p_consumer, p_max) l;
    ELSE
        LOOP
            BEGIN
                SELECT * INTO v_lease FROM tributary.lane_lease(g, p_consumer, p_max) l;
                EXIT;
            EXCEPTION WHEN connection_exception OR admin_shutdown OR crash_shutdown OR cannot_connect_now
                           OR internal_error THEN
                -- Each pass adds a worker or raises: it ends.
                IF tributary.note_unreachable_workers() = 0 THEN
                    RAISE;
                END IF;
            END;
        END LOOP;
    END IF;
    batch := v_lease.batch;
    lane := v_lease.lane;
    watermark := v_lease.watermark;
    sources := v_lease.sources;
    names := v_lease.names;
END $$;
