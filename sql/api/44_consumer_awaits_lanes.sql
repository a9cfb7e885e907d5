-- Whether a consumer that found nothing to do has lanes coming: what
-- `consume --until-idle` asks before it exits.
--
-- Public API (sql/api/): what users and consumers call. Errors a caller can
-- fix carry SQLSTATE 22023 (bad argument: exit code 2 in the CLI) or P0002
-- (no such group).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): a caller
-- needs EXECUTE on them, not the tables behind them (sql/privileges/).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- True when consumer p_consumer of group p_group, whose read has just found
-- nothing, holds fewer than its share of the group's lanes
-- (lane_share, as hold_lane_share counts it) while a lane
-- it does not hold has work: its last read filled a batch, or a batch of it
-- is in flight. Such a lane comes to it once its holder reads again and
-- gives back what is beyond its share (or leaves, or its hold runs out), so
-- the consumer should read again soon rather than call itself idle: several
-- `consume --until-idle` started together then share a backlog, where the
-- first to read would otherwise hold every lane and the others exit at once.
-- False in a group of one lane, and when the consumer holds its share: its
-- lanes are caught up, and the others' lanes stay theirs.
-- Called by: consumers with --until-idle; `tributary consume`.
CREATE OR REPLACE FUNCTION tributary.consumer_awaits_lanes(p_group text, p_consumer text) RETURNS boolean
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_group);
BEGIN
    IF tributary.lanes_of(v_group) = 1 THEN
        RETURN false;
    END IF;
    IF tributary.lanes_held(v_group, p_consumer) >= tributary.lane_share(v_group) THEN
        RETURN false;
    END IF;
    RETURN EXISTS (SELECT FROM tributary.group_lanes l
                    WHERE l.group_id = v_group.id
                      AND NOT (l.holder IS NOT DISTINCT FROM p_consumer AND l.held_until > now())
                      AND (l.backlogged OR tributary.lane_has_batches(v_group, l.lane)));
END $$;
