-- Acking a batch and leasing the next in one call: the batch-shaped read.
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

-- Acks batch p_prev_batch_id (delivery p_prev_lease_token), when given, and
-- leases the next batch of up to p_max events to consumer p_consumer of group
-- p_group, as consumer_ack and then consumer_read would, in one transaction:
-- one round trip per batch in the steady state. Always one row:
--   batch_id, lease_token, delivery  the batch leased; NULL: nothing to do now.
--   events          the batch as one JSON array in log order, an object per
--                   event: seq, source, event_id (null for a source keyed by
--                   text), event_key (every event's key as text), payload (as
--                   stored) and delivery. '[]' when no batch. Type text, not
--                   json: PostgreSQL builds json 17 % dearer (event_json).
--   previous_acked  whether the previous batch was acked: false when its
--                   lease was lost (taken over, or the group reset), as
--                   consumer_ack's false; NULL when none was given.
--   lane            the lane the batch came from, in a group of lanes
--                   (`group create --lanes N`: the events of sources s with
--                   s % N = lane); NULL in a group of one lane or when no
--                   batch. The consumer then holds its share of the group's
--                   lanes, and the batch comes from one of those
--                   (internal/32_lanes.sql).
-- A previous batch of another group is refused (22023): a client that mixes
-- its groups up must not ack one group's batch while reading another's.
-- To fail a batch or some of its events, call consumer_ack (with the failed
-- seqs) or consumer_fail, then consumer_next without a previous batch.
-- Called by: consumers; `tributary consume`.
-- The result gained lane (migration 0017): a result's shape cannot be
-- replaced, so an older consumer_next goes first (privileges/ grants again).
DO $$
BEGIN
    IF to_regprocedure('tributary.consumer_next(text, text, int, bigint, uuid)') IS NOT NULL
       AND NOT EXISTS (SELECT FROM pg_proc WHERE oid = to_regprocedure('tributary.consumer_next(text, text, int, bigint, uuid)')
                          AND 'lane' = ANY (proargnames)) THEN
        DROP FUNCTION tributary.consumer_next(text, text, int, bigint, uuid);
    END IF;
END $$;

CREATE OR REPLACE FUNCTION tributary.consumer_next(p_group text, p_consumer text, p_max int DEFAULT 1000,
                                                    p_prev_batch_id bigint DEFAULT NULL,
                                                    p_prev_lease_token uuid DEFAULT NULL)
RETURNS TABLE (batch_id bigint, lease_token uuid, delivery int, events text, previous_acked boolean, lane int)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    v_acked boolean;
    v_group tributary.consumer_groups;
    v_batch tributary.consumer_batches;
    v_lease record;
BEGIN
    IF (p_prev_batch_id IS NULL) <> (p_prev_lease_token IS NULL) THEN
        RAISE EXCEPTION 'name the previous batch by both its batch_id and its lease_token, or neither'
            USING ERRCODE = '22023';
    END IF;
    v_group := tributary.group_by_name(p_group);
    IF p_prev_batch_id IS NOT NULL THEN
        IF EXISTS (SELECT FROM tributary.consumer_batches b
                    WHERE b.id = p_prev_batch_id AND b.lease_token = p_prev_lease_token AND b.group_id <> v_group.id) THEN
            RAISE EXCEPTION 'batch % is not a batch of group ''%''', p_prev_batch_id, p_group USING ERRCODE = '22023',
                HINT = 'Name as the previous batch one that consumer_next or consumer_read gave for this group.';
        END IF;
        v_acked := tributary.consumer_ack(p_prev_batch_id, p_prev_lease_token);
    END IF;
    PERFORM tributary.check_read_arguments(p_consumer, p_max);
    IF tributary.lanes_of(v_group) > 1 THEN
        -- A group of lanes (internal/32_lanes.sql): from the lanes this consumer holds.
        SELECT * INTO v_lease FROM tributary.lane_lease_guarded(v_group, p_consumer, p_max) l;
        v_batch := v_lease.batch;
        IF v_batch.id IS NULL THEN
            RETURN QUERY SELECT NULL::bigint, NULL::uuid, NULL::int, '[]'::text, v_acked, NULL::int;
            RETURN;
        END IF;
        RETURN QUERY
        SELECT v_batch.id, v_batch.lease_token, v_batch.delivery,
               tributary.lane_batch_json(v_group, v_lease.lane, v_batch, v_lease.watermark, v_lease.sources,
                                         v_lease.names),
               v_acked, v_lease.lane;
        RETURN;
    END IF;
    v_batch := tributary.lease_waiting(v_group, p_consumer, NULL::int);
    IF v_batch.id IS NOT NULL THEN
        RETURN QUERY SELECT v_batch.id, v_batch.lease_token, v_batch.delivery, tributary.batch_json(v_batch), v_acked,
                            NULL::int;
        RETURN;
    END IF;

    -- The group row again, locked, for the cursor as the last fresh read left it.
    SELECT * INTO v_group FROM tributary.consumer_groups g WHERE g.id = v_group.id FOR NO KEY UPDATE;
    IF FOUND THEN
        RETURN QUERY SELECT f.batch_id, f.lease_token, f.delivery, f.events, v_acked, NULL::int
                       FROM tributary.read_fresh_json(v_group, p_consumer, p_max) f;
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT NULL::bigint, NULL::uuid, NULL::int, '[]'::text, v_acked, NULL::int;
END $$;
