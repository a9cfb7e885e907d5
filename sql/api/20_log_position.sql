-- Positions in the log, for a group's start and for read_log.
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
-- everything here is CREATE OR REPLACE.

-- A position (tx_id, seq) in the log's (tx_id, seq) order: a reader starting
-- there gets every event after it. 'beginning': before everything. 'end':
-- the current watermark, so every event committed from now on comes after it
-- (with possibly a few committed just before, by transactions that overlapped
-- the oldest one still running). A timestamp: before the first event with
-- loaded_at >= it; events of transactions that started before it but
-- committed after may come too (loaded_at is the transaction's start).
-- Finding a timestamp walks the log from the first partition that ended
-- after it: an operator's command, not a hot path.
-- Called by: group_create, group_reset; `tributary tail --from`.
CREATE OR REPLACE FUNCTION tributary.log_position(p_from text)
RETURNS TABLE (tx_id xid8, seq bigint)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    v_at timestamptz;
BEGIN
    CASE lower(btrim(coalesce(p_from, '')))
    WHEN 'beginning' THEN
        RETURN QUERY SELECT '0'::xid8, 0::bigint;
    WHEN 'end' THEN
        RETURN QUERY SELECT pg_snapshot_xmin(pg_current_snapshot()), 0::bigint;
    ELSE
        v_at := tributary.position_time(p_from);
        -- One statement, and never past the watermark: a transaction still
        -- running may hold events loaded after v_at below the first visible one.
        RETURN QUERY
        SELECT least(first.tx_id, pg_snapshot_xmin(pg_current_snapshot())), 0::bigint
          FROM (SELECT) one
          LEFT JOIN LATERAL (SELECT e.tx_id FROM tributary.events e
                              WHERE e.loaded_at >= v_at
                                -- Not in the partitions that ended before v_at: every event in
                                -- them was loaded before their end.
                                AND e.tx_id >= coalesce((SELECT max(p.to_tx) FROM tributary.partitions p
                                                          WHERE p.ended_at < v_at), '0'::xid8)
                              ORDER BY e.tx_id, e.seq LIMIT 1) first ON true;
    END CASE;
END $$;
