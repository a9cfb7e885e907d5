-- How far behind each group is.
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

-- events_behind: events of the group's sources not yet handed out (after the
-- cursor). oldest_unprocessed_age: age (since loaded_at) of the oldest event
-- not yet acked: behind, in flight or waiting for a retry (dead letters
-- excluded); NULL when there is none.
-- lanes: 1, or the lanes of a group of lanes (internal/32_lanes.sql);
-- unheld_lanes: how many of them no consumer holds now (their events wait;
-- per lane: group_lanes_status).
-- Called by: admins and consumers; `tributary group status`.
-- The view is this function's rows (p_group NULL: every group), so that
-- the log has no view over it that names the consumer groups' tables: on
-- Citus such a view keeps the log's partitions from being created
-- (docs/citus.md). The group commands ask for one group here.
CREATE OR REPLACE FUNCTION tributary.group_status_of(p_group text)
RETURNS TABLE (name text, pattern text, ordered boolean, max_deliveries int, lease interval, events_behind bigint,
               oldest_unprocessed_age interval, batches_in_flight int, retries_waiting int, dead_letters int,
               lanes int, unheld_lanes int)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT g.name, g.pattern, g.ordered, g.max_deliveries, g.lease,
           behind.events AS events_behind,
           now() - least(behind.oldest, flight.oldest, retry.oldest) AS oldest_unprocessed_age,
           flight.batches AS batches_in_flight,
           retry.events AS retries_waiting,
           dead.events AS dead_letters,
           tributary.lanes_of(g) AS lanes,
           tributary.unheld_lanes(g) AS unheld_lanes
      FROM tributary.consumer_groups g
     CROSS JOIN LATERAL tributary.group_backlog(g) behind
     CROSS JOIN LATERAL tributary.group_flight(g) flight
     CROSS JOIN LATERAL tributary.group_retries(g) retry
     CROSS JOIN LATERAL (
           SELECT count(*)::int AS events FROM tributary.consumer_dead_letters d WHERE d.group_id = g.id) dead
     WHERE p_group IS NULL OR g.name = p_group
     ORDER BY g.name;
END $$;

CREATE OR REPLACE VIEW tributary.group_status AS SELECT * FROM tributary.group_status_of(NULL);

-- Group p_group's lease, or P0002 when there is no such group: what a
-- consumer needs to start (`tributary consume`). Unlike group_status_of it
-- counts no backlog, which on Citus asks every lane's worker: a consumer
-- starts while a worker is down, and reads the others' lanes
-- (internal/33_unreachable_workers.sql).
-- Called by: consumers; `tributary consume`.
CREATE OR REPLACE FUNCTION tributary.group_lease(p_group text) RETURNS interval
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
SELECT (tributary.group_by_name(p_group)).lease $$;
