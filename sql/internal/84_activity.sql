-- The console's per-minute counts (issue 17; tables in migrations/0014):
-- folded from the log by the maintainer's activity step
-- (src/maintenance/activity_step.cpp), so that a chart reads at most 60
-- rows however large the log.
--
-- Internal (sql/internal/): called by the maintainer. Runs as its owner
-- (SECURITY DEFINER; search_path pinned): the maintainer may only execute
-- it (sql/privileges/20_roles.sql).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Counts about p_max more events of the log (at least 1) into
-- source_minutes and log_minutes, by the minute of their loaded_at, and
-- moves the position past them; returns how many it counted.
--
-- Exactly once: the position row is locked FOR UPDATE first, so a second
-- fold waits, then reads the position the first one committed (READ
-- COMMITTED re-reads a row it waited for) and goes on from there. Only
-- events of transactions below the horizon (the xmin of a snapshot taken
-- after the lock: every transaction below it has ended, so no event can
-- still join them) are read, in (tx_id, seq) order, one partition at a
-- time, as a consumer group's fresh read does (lease_fresh): a transaction
-- left open holds the fold back, it never makes it skip.
--
-- Only the last 24 hours are kept: partitions that ended more than 24 h ago
-- are skipped whole (the first fold of a large log starts at the first
-- partition that may hold a recent event, not at the log's beginning), and
-- events loaded more than 24 h ago are passed over without being counted.
-- Rows older than 24 h are trimmed on every call.
--
-- `through`: once the fold reaches the horizon, the start of the oldest
-- transaction still running that it can see (pg_stat_activity shows
-- xact_start of other roles' sessions only to a superuser or
-- pg_read_all_stats) or now: every event loaded before it is counted.
-- Unchanged while the fold is behind.
-- Called by: the maintainer's activity step; tests.
CREATE OR REPLACE FUNCTION tributary.activity_fold(p_max int) RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    -- A record, not the table's row type: migration 0013 applies these definitions before 0014 exists.
    v_pos record;
    v_horizon xid8;
    v_recent_from xid8;
    v_end xid8;
    v_cut timestamptz := now() - interval '24 hours';
    v_left int := greatest(p_max, 1);
    v_count int;
    v_last_tx xid8;
    v_last_seq bigint;
    v_total int := 0;
BEGIN
    SELECT * INTO v_pos FROM tributary.activity_position FOR UPDATE;
    v_horizon := pg_snapshot_xmin(pg_current_snapshot());
    -- The first partition that may hold an event of the last 24 hours.
    SELECT min(p.from_tx) INTO v_recent_from
      FROM tributary.partitions p WHERE p.ended_at IS NULL OR p.ended_at >= v_cut;
    IF v_pos.tx_id IS NULL OR v_pos.tx_id < v_recent_from THEN
        v_pos.tx_id := coalesce(v_recent_from, '0'::xid8);
        v_pos.seq := 0;
    END IF;
    WHILE v_left > 0 AND v_pos.tx_id < v_horizon LOOP
        v_end := least(v_horizon, coalesce(tributary.partition_end(v_pos.tx_id), v_horizon));
        WITH chunk AS MATERIALIZED (
            SELECT e.tx_id, e.seq, e.source_id, date_trunc('minute', e.loaded_at) AS minute,
                   e.loaded_at >= v_cut AS recent
              FROM tributary.events e
             WHERE (e.tx_id, e.seq) > (v_pos.tx_id, v_pos.seq)
               AND e.tx_id >= v_pos.tx_id    -- implied by the line above; said apart, it prunes the partitions below
               AND e.tx_id < v_end
             ORDER BY e.tx_id, e.seq
             LIMIT v_left
        ), per_source AS (
            INSERT INTO tributary.source_minutes AS m (source_id, minute, events)
            SELECT c.source_id, c.minute, count(*) FROM chunk c WHERE c.recent GROUP BY c.source_id, c.minute
            ON CONFLICT (source_id, minute) DO UPDATE SET events = m.events + excluded.events
        ), per_log AS (
            INSERT INTO tributary.log_minutes AS m (minute, events)
            SELECT c.minute, count(*) FROM chunk c WHERE c.recent GROUP BY c.minute
            ON CONFLICT (minute) DO UPDATE SET events = m.events + excluded.events
        )
        SELECT count(*)::int, (array_agg(c.tx_id ORDER BY c.tx_id DESC, c.seq DESC))[1],
               (array_agg(c.seq ORDER BY c.tx_id DESC, c.seq DESC))[1]
          INTO v_count, v_last_tx, v_last_seq
          FROM chunk c;
        v_total := v_total + v_count;
        IF v_count < v_left THEN
            -- Everything up to the read's end was taken: on to the next partition.
            v_pos.tx_id := v_end;
            v_pos.seq := 0;
        ELSE
            v_pos.tx_id := v_last_tx;    -- the last event taken
            v_pos.seq := v_last_seq;
        END IF;
        v_left := v_left - v_count;
    END LOOP;
    IF v_pos.tx_id >= v_horizon THEN
        v_pos.through := least(now(), (SELECT min(a.xact_start) FROM pg_stat_activity a
                                        WHERE (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
                                          AND a.pid <> pg_backend_pid()));
    END IF;
    UPDATE tributary.activity_position
       SET tx_id = v_pos.tx_id, seq = v_pos.seq, through = v_pos.through, folded_at = now();
    DELETE FROM tributary.source_minutes m WHERE m.minute < v_cut - interval '1 minute';
    DELETE FROM tributary.log_minutes m WHERE m.minute < v_cut - interval '1 minute';
    RETURN v_total;
END $$;
