-- Closing a batch's delivery: ack (with failed events, if any), fail, or
-- extend its lease.
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

-- Closes the delivery p_lease_token of batch p_batch_id: the batch is done,
-- except the events in p_failed_seqs, which are retried alone (or
-- dead-lettered, see fail_events) with p_error. false: the lease was lost
-- (taken over, or the group was reset or deleted): nothing changed. An ack
-- after the lease expired still counts while no one has taken the batch over.
-- Called by: consumers; `tributary consume`.
CREATE OR REPLACE FUNCTION tributary.consumer_ack(p_batch_id bigint, p_lease_token uuid,
                                                   p_failed_seqs bigint[] DEFAULT NULL, p_error text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_batch tributary.consumer_batches;
    v_strangers bigint[];
BEGIN
    DELETE FROM tributary.consumer_batches b WHERE b.id = p_batch_id AND b.lease_token = p_lease_token
    RETURNING * INTO v_batch;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF cardinality(p_failed_seqs) > 0 THEN
        v_strangers := ARRAY(SELECT unnest(p_failed_seqs) EXCEPT SELECT unnest(v_batch.seqs));
        IF cardinality(v_strangers) > 0 THEN
            RAISE EXCEPTION 'events % are not in batch %', v_strangers, p_batch_id USING ERRCODE = '22023',
                HINT = 'List in p_failed_seqs only seqs that this batch delivered.';
        END IF;
        PERFORM tributary.fail_events((SELECT g FROM tributary.consumer_groups g WHERE g.id = v_batch.group_id),
                                      v_batch, p_failed_seqs, coalesce(p_error, 'failed'), true);
    END IF;
    RETURN true;
END $$;

-- Fails every event of the batch (see consumer_ack).
-- Called by: consumers; `tributary consume`.
CREATE OR REPLACE FUNCTION tributary.consumer_fail(p_batch_id bigint, p_lease_token uuid, p_error text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_batch tributary.consumer_batches;
BEGIN
    DELETE FROM tributary.consumer_batches b WHERE b.id = p_batch_id AND b.lease_token = p_lease_token
    RETURNING * INTO v_batch;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM tributary.fail_events((SELECT g FROM tributary.consumer_groups g WHERE g.id = v_batch.group_id),
                                  v_batch, v_batch.seqs, coalesce(p_error, 'failed'), true);
    RETURN true;
END $$;

-- Heartbeat: the lease now lasts p_lease (default: the group's) from now.
-- false: the lease was lost. In a group of lanes the consumer's lanes are
-- held as long too, and it stays counted among the group's consumers: a
-- handler slower than the lease keeps its lanes while it heartbeats.
-- Called by: consumers (heartbeat); `tributary consume`.
CREATE OR REPLACE FUNCTION tributary.consumer_extend(p_batch_id bigint, p_lease_token uuid,
                                                      p_lease interval DEFAULT NULL) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_batch tributary.consumer_batches;
BEGIN
    IF p_lease <= interval '0' THEN
        RAISE EXCEPTION 'invalid lease %: it must be positive, e.g. ''30 seconds''', p_lease USING ERRCODE = '22023';
    END IF;
    UPDATE tributary.consumer_batches b SET leased_until = now() + coalesce(p_lease, g.lease)
      FROM tributary.consumer_groups g
     WHERE b.id = p_batch_id AND b.lease_token = p_lease_token AND g.id = b.group_id
    RETURNING b.* INTO v_batch;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF tributary.lanes_in_place() THEN
        UPDATE tributary.group_lanes l SET held_until = greatest(l.held_until, v_batch.leased_until)
         WHERE l.group_id = v_batch.group_id AND l.holder = v_batch.consumer AND l.held_until > now();
        IF FOUND THEN
            UPDATE tributary.group_consumers c SET seen_until = greatest(c.seen_until, v_batch.leased_until)
             WHERE c.group_id = v_batch.group_id AND c.consumer = v_batch.consumer;
        END IF;
    END IF;
    RETURN true;
END $$;
