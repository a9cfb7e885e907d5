-- Reading the log without a group: stateless, the caller keeps its position.
--
-- Public API (sql/api/): what users and consumers call. Errors a caller can
-- fix carry SQLSTATE 22023 (bad argument: exit code 2 in the CLI) or P0002
-- (no such group). Call these in autocommit or READ COMMITTED transactions: a
-- consumer_read must see what other consumers committed a moment ago, and
-- its watermark is only as fresh as its statement's snapshot.
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): a caller
-- needs EXECUTE on them, not the tables behind them (sql/privileges/).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE, after dropping a function whose
-- result lacks a column added since (a result's shape cannot be replaced;
-- sql/privileges/ grants it again in the same transaction).

-- read_log's rows gained event_key, last (migration 0008). A database whose
-- read_log returns the older rows gets it anew.
DO $$
BEGIN
    IF to_regprocedure('tributary.read_log(text, xid8, bigint, int)') IS NOT NULL
       AND NOT EXISTS (SELECT FROM pg_proc WHERE oid = to_regprocedure('tributary.read_log(text, xid8, bigint, int)')
                          AND 'event_key' = ANY (proargnames)) THEN
        DROP FUNCTION tributary.read_log(text, xid8, bigint, int);
    END IF;
END $$;

-- Up to p_max events after position (p_after_tx, p_after_seq) (NULL: the
-- beginning) from sources matching p_pattern, under the same watermark as
-- consumer_read. Stateless: the caller remembers the last (tx_id, seq).
-- event_key and event_id as consumer_read's.
-- Called by: consumers without a group; `tributary tail` (on one PostgreSQL;
-- on Citus it refuses: read_log_lanes).
CREATE OR REPLACE FUNCTION tributary.read_log(p_pattern text, p_after_tx xid8, p_after_seq bigint, p_max int DEFAULT 1000)
RETURNS TABLE (tx_id xid8, seq bigint, source text, event_id bigint, payload jsonb, loaded_at timestamptz,
               event_key text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    -- Taken before the read: every transaction below it had ended then, so
    -- the read's own snapshot sees the same events below it.
    v_watermark xid8 := pg_snapshot_xmin(pg_current_snapshot());
    v_sources int[];    -- NULL: every source ('>')
BEGIN
    -- On Citus each worker counts its own transactions: no one order to
    -- read in (22_read_log_lanes.sql).
    IF tributary.lanes_by_shard() THEN
        RAISE EXCEPTION 'the log is distributed (Citus): it has no one (tx_id, seq) order for read_log'
            USING ERRCODE = '0A000',
            HINT = 'Read it lane by lane with read_log_lanes, from a position of log_lane_positions.';
    END IF;
    PERFORM tributary.check_pattern(p_pattern);
    IF p_max IS NULL OR p_max NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'invalid batch size %: use 1 to 100000', p_max USING ERRCODE = '22023';
    END IF;
    IF p_pattern <> '>' THEN
        v_sources := tributary.matching_sources(p_pattern);
    END IF;
    RETURN QUERY
    SELECT e.tx_id, e.seq, s.name, e.event_id, e.payload, e.loaded_at, coalesce(e.event_key, e.event_id::text)
      FROM (SELECT e.* FROM tributary.events e
             WHERE (e.tx_id, e.seq) > (coalesce(p_after_tx, '0'::xid8), coalesce(p_after_seq, 0))
               AND e.tx_id >= coalesce(p_after_tx, '0'::xid8)    -- prunes the partitions below
               AND e.tx_id < v_watermark
               AND (v_sources IS NULL OR e.source_id = ANY (v_sources))
             ORDER BY e.tx_id, e.seq
             LIMIT p_max) e
      JOIN tributary.sources s ON s.id = e.source_id
     ORDER BY e.tx_id, e.seq;
END $$;
