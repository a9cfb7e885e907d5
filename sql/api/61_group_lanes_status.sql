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
--   oldest_unprocessed_age  as group_status's, for the lane (of a batch in
--                      flight, its first event's age)
--   batches_in_flight, retries_waiting  as group_status's, for the lane
--   read_at            when a fresh read last moved the lane's cursor
-- Called by: admins and consumers; `tributary group lanes`.
CREATE OR REPLACE FUNCTION tributary.group_lanes_status(p_group text)
RETURNS TABLE (lane int, holder text, held_until timestamptz, events_behind bigint,
               oldest_unprocessed_age interval, batches_in_flight int, retries_waiting int, read_at timestamptz)
LANGUAGE sql STABLE SET jit = off
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
SELECT l.lane, l.holder, l.held_until, l.events_behind, l.oldest_unprocessed_age, l.batches_in_flight,
       l.retries_waiting, l.read_at
  FROM tributary.lane_rows(tributary.group_by_name(p_group), NULL) l $$;
