-- A consumer that stops, saying so: the lanes it held go to the others at
-- once rather than one lease later.
--
-- Public API (sql/api/): what users and consumers call. Errors a caller can
-- fix carry SQLSTATE 22023 (bad argument: exit code 2 in the CLI) or P0002
-- (no such group).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): a caller
-- needs EXECUTE on them, not the tables behind them (sql/privileges/).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Consumer p_consumer of group p_group stops: in a group of lanes
-- (internal/32_lanes.sql) it is no longer counted among the consumers, and
-- the lanes it holds are free for the others' next reads, but for a lane
-- with a batch in flight: that lane stays held until the batch's lease ends
-- (a lane is held as long as its batches are leased, so no other consumer
-- reads a source's later events meanwhile). Its batches in flight stay
-- leased to it: acked before their leases end they count, else they are
-- taken over as always. Returns how many lanes it gave back (0 in a group of
-- one lane, or when it held none). Calling it for a consumer that goes on
-- reading is harmless: its next read takes its share again.
-- Called by: consumers, when they stop; `tributary consume`.
CREATE OR REPLACE FUNCTION tributary.consumer_leave(p_group text, p_consumer text) RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_group);
    v_lanes int;
BEGIN
    DELETE FROM tributary.group_consumers c WHERE c.group_id = v_group.id AND c.consumer = p_consumer;
    UPDATE tributary.group_lanes l SET holder = NULL, held_until = NULL
     WHERE l.group_id = v_group.id AND l.holder = p_consumer
       AND NOT tributary.lane_has_batches(v_group, l.lane);
    GET DIAGNOSTICS v_lanes = ROW_COUNT;
    RETURN v_lanes;
END $$;
