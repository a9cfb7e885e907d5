-- How each lane of a group of lanes is doing (issue 28; internal/32_lanes.sql).
--
-- Public API (sql/api/): what users and consumers call. Errors a caller can
-- fix carry SQLSTATE 22023 (bad argument: exit code 2 in the CLI) or P0002
-- (no such group).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): a caller
-- needs EXECUTE on them, not the tables behind them (sql/privileges/).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE. Functions, not views: a view over
-- group_lanes could not be created before migration 0017 (see lanes_of).

-- One row per lane of group p_group (a group of one lane has none), in lane
-- order:
--   lane               0 .. lanes-1: the sources s with s % lanes = lane
--   holder             the consumer holding it; NULL: nobody (no consumer
--                      alive has room, or none runs): its events wait
--   held_until         when the holder's hold runs out unless it reads again
--   events_behind      events of the lane's sources not yet handed out
--   oldest_unprocessed_age  as group_status's, for the lane
--   batches_in_flight, retries_waiting  as group_status's, for the lane
--   read_at            when a fresh read last moved the lane's cursor
-- Called by: admins and consumers; `tributary group lanes`.
CREATE OR REPLACE FUNCTION tributary.group_lanes_status(p_group text)
RETURNS TABLE (lane int, holder text, held_until timestamptz, events_behind bigint,
               oldest_unprocessed_age interval, batches_in_flight int, retries_waiting int, read_at timestamptz)
LANGUAGE plpgsql STABLE SET jit = off
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_group);
    v_lanes int := tributary.lanes_of(v_group);
    v_bits bit varying := CASE WHEN v_group.pattern <> '>'
                               THEN coalesce(v_group.source_bits, tributary.matching_source_bits(v_group.pattern)) END;
BEGIN
    IF v_lanes = 1 THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT l.lane, CASE WHEN l.held_until > now() THEN l.holder END, l.held_until, behind.events,
           now() - least(behind.oldest, flight.oldest, retry.oldest), flight.batches, retry.events, l.read_at
      FROM tributary.group_lanes l
     CROSS JOIN LATERAL (
           SELECT count(*) AS events, min(e.loaded_at) AS oldest
             FROM tributary.events e
            WHERE (e.tx_id, e.seq) > (l.cursor_tx, l.cursor_seq)
              AND e.tx_id >= l.cursor_tx    -- prunes the partitions below
              AND e.source_id % v_lanes = l.lane
              AND (v_bits IS NULL OR (e.source_id < length(v_bits) AND get_bit(v_bits, e.source_id) = 1))) behind
     CROSS JOIN LATERAL (
           SELECT count(*)::int AS batches,
                  (SELECT min(e.loaded_at) FROM tributary.consumer_batches b2
                     JOIN tributary.events e
                       ON e.seq = ANY (b2.seqs)
                      AND e.tx_id BETWEEN tributary.tx_from(b2.tx_from) AND tributary.tx_to(b2.tx_to)
                    WHERE b2.group_id = v_group.id AND b2.source_ids[1] % v_lanes = l.lane) AS oldest
             FROM tributary.consumer_batches b
            WHERE b.group_id = v_group.id AND b.source_ids[1] % v_lanes = l.lane) flight
     CROSS JOIN LATERAL (
           SELECT count(*)::int AS events, min(e.loaded_at) AS oldest
             FROM tributary.consumer_retries r
             JOIN tributary.events e
               ON e.seq = r.seq AND e.tx_id BETWEEN tributary.tx_from(r.tx_from) AND tributary.tx_to(r.tx_to)
            WHERE r.group_id = v_group.id AND r.source_id % v_lanes = l.lane) retry
     WHERE l.group_id = v_group.id
     ORDER BY l.lane;
END $$;
