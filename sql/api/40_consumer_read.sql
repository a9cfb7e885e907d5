-- Reading a batch for a consumer of a group.
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

-- consumer_read's rows gained event_key, last (migration 0008). A database
-- whose consumer_read returns the older rows gets it anew.
DO $$
BEGIN
    IF to_regprocedure('tributary.consumer_read(text, text, int)') IS NOT NULL
       AND NOT EXISTS (SELECT FROM pg_proc WHERE oid = to_regprocedure('tributary.consumer_read(text, text, int)')
                          AND 'event_key' = ANY (proargnames)) THEN
        DROP FUNCTION tributary.consumer_read(text, text, int);
    END IF;
END $$;

-- A batch of up to p_max events for consumer p_consumer of group p_group,
-- leased for the group's lease: in order of preference an expired batch taken
-- over, one due retry, or fresh events. No rows: nothing to do now.
-- event_key is the key of every event as text, whatever its source's paging
-- style; event_id is the integer key of an after-id source's event, NULL for
-- a source keyed by text.
-- Called by: consumers; `tributary consume`.
CREATE OR REPLACE FUNCTION tributary.consumer_read(p_group text, p_consumer text, p_max int DEFAULT 1000)
RETURNS TABLE (batch_id bigint, lease_token uuid, delivery int, seq bigint, source text,
               event_id bigint, payload jsonb, loaded_at timestamptz, event_key text)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
#variable_conflict use_column
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_group);
    v_batch tributary.consumer_batches;
    v_lease record;
BEGIN
    PERFORM tributary.check_read_arguments(p_consumer, p_max);
    IF tributary.lanes_of(v_group) > 1 THEN
        -- A group of lanes (internal/32_lanes.sql): from the lanes this consumer holds.
        SELECT * INTO v_lease FROM tributary.lane_lease_guarded(v_group, p_consumer, p_max) l;
        v_batch := v_lease.batch;
        IF v_batch.id IS NOT NULL THEN
            RETURN QUERY
            SELECT v_batch.id, v_batch.lease_token, v_batch.delivery, f.seq, v_lease.names ->> f.source_id::text,
                   f.event_id, f.payload, f.loaded_at, f.event_key
              FROM tributary.lane_batch_events(v_group, v_lease.lane, v_batch, v_lease.watermark, v_lease.sources) f;
        END IF;
        RETURN;
    END IF;
    v_batch := tributary.lease_waiting(v_group, p_consumer, NULL::int);
    IF v_batch.id IS NOT NULL THEN
        RETURN QUERY SELECT * FROM tributary.batch_events(v_batch);
        RETURN;
    END IF;

    -- The group row again, locked, for the cursor as the last fresh read left it.
    SELECT * INTO v_group FROM tributary.consumer_groups g WHERE g.id = v_group.id FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN;    -- deleted meanwhile
    END IF;
    RETURN QUERY SELECT * FROM tributary.read_fresh(v_group, p_consumer, p_max);
END $$;
