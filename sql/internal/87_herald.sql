-- The herald: wake-ups without a NOTIFY in any event writer's transaction
-- (issue 27).
--
-- A transaction that calls NOTIFY holds a cluster-wide lock from just before
-- its commit until its commit record is flushed, so notifying commits go one
-- at a time. So publish, receiver_store and the loaders notify nobody; one
-- process at a time, the herald, holds the lease below (one row, migration
-- 0016; elected as the maintainer is) and every interval (10 ms by default)
-- calls herald_announce_nodes (herald_announce before issue 29, kept for
-- older binaries), which sends one `NOTIFY tributary_events` when events
-- became readable since its last call: what consumers LISTEN for.
-- River, Oban and PgQ wake their consumers the same way.
--
-- Readable means below the watermark: the xmin of a snapshot, below which
-- every transaction has ended (docs/design.md §7, the consumers' own rule).
-- So a hint never announces an event that a read right after it cannot see,
-- even while another open transaction holds the watermark back.
--
-- Internal (sql/internal/): called by `run`, `receive`, `maintain` and
-- `consume`, whichever holds the lease (src/maintenance/announce_step.h).
-- They run as their owner (SECURITY DEFINER; search_path pinned); the roles
-- of those commands may execute them (sql/privileges/20_roles.sql).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Takes or renews the herald's lease for p_lease: when it expired, or
-- p_holder holds it already. Returns the token (a new one for a new holder,
-- or for the same holder after its lease had expired), or NULL: another
-- holds it (sql/internal/79_leases.sql).
-- Called by: every herald candidate, every lease/3.
-- (PL/pgSQL, as the others here: a migration older than 0016 may apply these
-- definitions before herald_lease exists, and only SQL functions' bodies are
-- checked at creation.)
CREATE OR REPLACE FUNCTION tributary.herald_acquire(p_holder text, p_lease interval) RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN tributary.lease_take('tributary.herald_lease', 'herald_acquire', p_holder, p_lease);
END $$;

-- Gives the lease up (a herald that stops): the next may take it at once.
CREATE OR REPLACE FUNCTION tributary.herald_release(p_holder text, p_token bigint) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM tributary.lease_give_up('tributary.herald_lease', p_holder, p_token);
END $$;

-- Whether p_holder holds the herald's lease with p_token, unexpired: a
-- herald that lost it announces nothing.
-- Called by: herald_announce, herald_announce_nodes.
CREATE OR REPLACE FUNCTION tributary.herald_holds(p_holder text, p_token bigint) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN EXISTS (SELECT FROM tributary.herald_lease l
                    WHERE l.holder = p_holder AND l.token = p_token AND l.expires_at > clock_timestamp());
END $$;

-- One beat of the herald holding the lease with p_token (of a binary before
-- herald_announce_nodes; that one calls this on one PostgreSQL): returns the
-- watermark now, and, when an event became readable since p_since (the
-- watermark it returned last time; NULL: unknown, as after taking the lease
-- or a lost connection), sends `NOTIFY tributary_events, '<watermark>'`
-- (every event with tx_id below it is readable) and says so (announced).
-- watermark NULL, and no NOTIFY: the lease is not p_holder's with p_token,
-- unexpired (another took it).
--
-- Its cost does not grow with the write rate: the lease's one row, and at
-- most one probe of events_tx_seq for the first event between the two
-- watermarks (partitions outside the range are pruned). Its transaction is
-- the statement's own; it takes the NOTIFY lock only when it announces, at
-- most once per beat, and no writer waits for it.
-- Called by: the herald, every interval (10 ms by default).
CREATE OR REPLACE FUNCTION tributary.herald_announce(p_holder text, p_token bigint, p_since xid8,
                                                     OUT watermark xid8, OUT announced boolean)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    announced := false;
    IF NOT tributary.herald_holds(p_holder, p_token) THEN
        RETURN;
    END IF;
    watermark := pg_snapshot_xmin(pg_current_snapshot());
    -- On Citus the events carry their workers' transaction ids, of which
    -- this node's watermark says nothing: herald_announce_nodes hints there.
    IF tributary.log_is_distributed() THEN
        RETURN;
    END IF;
    -- Every transaction below p_since had ended at the last beat, so what it
    -- wrote was announced then (or before the lease was taken: p_since NULL).
    IF p_since IS NULL
       OR (watermark > p_since
           AND EXISTS (SELECT 1 FROM tributary.events e WHERE e.tx_id >= p_since AND e.tx_id < watermark)) THEN
        PERFORM pg_notify('tributary_events', watermark::text);    -- src/postgres/control_channel.h
        announced := true;
    END IF;
END $$;

-- One beat of the herald holding the lease with p_token, one position per
-- node that holds events (issue 29: on Citus each worker has its own
-- transaction ids, so its own watermark). p_since holds the watermarks this
-- returned last time (NULL, or another count of nodes: unknown, as after
-- taking the lease, a lost connection or a worker added); returns the
-- watermarks now, and, when an event became readable on any node since its
-- watermark in p_since, sends one `NOTIFY tributary_events` and says so
-- (announced). watermarks NULL, and no NOTIFY: the lease is not p_holder's
-- with p_token, unexpired.
--
-- On one PostgreSQL: herald_announce, its watermark an array of one, the
-- payload the same. On Citus (docs/citus.md, wake-ups): one watermark per
-- worker group that holds shards of the log, in the order of their group
-- ids, each taken on its worker by herald_node_beat, which also looks there
-- whether an event became readable: one statement sent whole to each
-- worker (by the anchor of one of its lanes, as lane_watermark), one worker
-- after the other; no statement per shard. The payload is the array.
-- Called by: the herald, every interval (10 ms by default; 50 ms on Citus).
CREATE OR REPLACE FUNCTION tributary.herald_announce_nodes(p_holder text, p_token bigint, p_since xid8[],
                                                           OUT watermarks xid8[], OUT announced boolean)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_watermark xid8;
    v_anchors int[];
    v_known boolean;
    v_beat xid8[];
    v_news boolean := false;
BEGIN
    IF NOT tributary.log_is_distributed() THEN
        SELECT a.watermark, a.announced INTO v_watermark, announced
          FROM tributary.herald_announce(p_holder, p_token,
                                         CASE WHEN cardinality(p_since) = 1 THEN p_since[1] END) a;
        watermarks := CASE WHEN v_watermark IS NOT NULL THEN ARRAY[v_watermark] END;
        RETURN;
    END IF;
    announced := false;
    IF NOT tributary.herald_holds(p_holder, p_token) THEN
        RETURN;
    END IF;
    -- Each worker group with shards of the log, by its first lane's anchor.
    SELECT array_agg(g.anchor ORDER BY g.groupid) INTO v_anchors
      FROM (SELECT p.groupid, min(l.anchor) AS anchor
              FROM tributary.citus_lanes l
              JOIN pg_dist_placement p ON p.shardid = l.shard_id
             GROUP BY p.groupid) g;
    v_known := coalesce(cardinality(p_since) = cardinality(v_anchors), false);
    watermarks := '{}';
    FOR i IN 1 .. coalesce(cardinality(v_anchors), 0) LOOP
        -- Sent whole to the anchor's worker: the function runs there, on its snapshots.
        EXECUTE tributary.on_anchor_worker_sql(
                    format('tributary.herald_node_beat(%L::xid8)', CASE WHEN v_known THEN p_since[i] END),
                    v_anchors[i])
           INTO v_beat;
        watermarks := watermarks || v_beat[1];
        v_news := v_news OR NOT v_known OR cardinality(v_beat) > 1;
    END LOOP;
    IF v_news THEN
        PERFORM pg_notify('tributary_events', watermarks::text);    -- src/postgres/control_channel.h
        announced := true;
    END IF;
END $$;

-- A worker's part of a beat (Citus only): run on the worker, inside the
-- statement herald_announce_nodes sends there. Returns its watermark, the
-- xmin of a snapshot taken there, and after it, when an event of a
-- transaction in [p_since, watermark) is in one of the worker's shards of
-- the log, that transaction's id (p_since NULL: not looked for). The
-- watermark is taken first: the look's later snapshot sees every
-- transaction below it that committed.
--
-- The look reads the worker's own shards directly, in one statement (a read
-- of the distributed log from here would go out to every shard again),
-- each through its (tx_id, seq) index. Planning that statement costs more
-- than running it (16 shards of 5 partitions: ~1 ms), so it is prepared
-- once per session, which is the connection the herald's coordinator
-- session keeps to this worker, and run with a generic plan (partitions
-- pruned as it runs). Its name carries a digest of the shard list: a shard
-- moved here or away makes a new one.
-- Called by: herald_announce_nodes, through a statement on the worker.
CREATE OR REPLACE FUNCTION tributary.herald_node_beat(p_since xid8) RETURNS xid8[]
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    v_watermark xid8 := pg_snapshot_xmin(pg_current_snapshot());
    v_shards text;
    v_probe text;
    v_found xid8;
BEGIN
    IF p_since IS NULL OR v_watermark <= p_since THEN
        RETURN ARRAY[v_watermark];
    END IF;
    SELECT string_agg(format('(SELECT e.tx_id FROM tributary.%I e WHERE e.tx_id >= $1 AND e.tx_id < $2 LIMIT 1)',
                             'events_' || s.shardid), ' UNION ALL ' ORDER BY s.shardid)
      INTO v_shards
      FROM pg_dist_shard s
      JOIN pg_dist_placement p ON p.shardid = s.shardid
     WHERE s.logicalrelid = 'tributary.events'::regclass
       AND p.groupid = (SELECT g.groupid FROM pg_dist_local_group g);
    IF v_shards IS NULL THEN
        RETURN ARRAY[v_watermark];
    END IF;
    v_probe := 'tributary_herald_probe_' || md5(v_shards);
    IF NOT EXISTS (SELECT FROM pg_prepared_statements ps WHERE ps.name = v_probe) THEN
        EXECUTE format('PREPARE %I (xid8, xid8) AS SELECT x.tx_id FROM (%s) x LIMIT 1', v_probe, v_shards);
    END IF;
    EXECUTE format('EXECUTE %I(%L, %L)', v_probe, p_since, v_watermark) INTO v_found;
    RETURN CASE WHEN v_found IS NULL THEN ARRAY[v_watermark] ELSE ARRAY[v_watermark, v_found] END;
END $$;
