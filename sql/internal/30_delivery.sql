-- The steps of consumer_read, consumer_next and consumer_ack (api/40-42):
-- the events of a batch in hand, taking over expired batches, due retries,
-- failing events. Fresh events are in 31_fresh_reads.sql. Calling them
-- alone skips the locking their callers do.
--
-- Internal (sql/internal/): steps of the public functions and the loader's
-- own functions. Nothing outside tributary should call them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE, after dropping a function whose
-- result lacks a column added since (a result's shape cannot be replaced).

-- The rows of a read gained event_key, last (migration 0008: sources keyed
-- by text have no event_id). A database whose batch_events returns the older
-- rows gets it anew.
DO $$
BEGIN
    IF to_regprocedure('tributary.batch_events(tributary.consumer_batches)') IS NOT NULL
       AND NOT EXISTS (SELECT FROM pg_proc WHERE oid = to_regprocedure('tributary.batch_events(tributary.consumer_batches)')
                          AND 'event_key' = ANY (proargnames)) THEN
        DROP FUNCTION tributary.batch_events(tributary.consumer_batches);
    END IF;
END $$;

-- The rows consumer_read returns for a batch that is already in the table.
-- event_key is every event's key as text: events.event_key, or the event_id
-- of a source keyed by id (whose event_key is NULL in the table).
-- Called by: consumer_read.
CREATE OR REPLACE FUNCTION tributary.batch_events(b tributary.consumer_batches)
RETURNS TABLE (batch_id bigint, lease_token uuid, delivery int, seq bigint, source text,
               event_id bigint, payload jsonb, loaded_at timestamptz, event_key text)
LANGUAGE sql STABLE AS $$
SELECT b.id, b.lease_token, b.delivery, e.seq, s.name, e.event_id, e.payload, e.loaded_at,
       coalesce(e.event_key, e.event_id::text)
  FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id
 WHERE e.seq = ANY (b.seqs)
   AND e.tx_id BETWEEN tributary.tx_from(b.tx_from) AND tributary.tx_to(b.tx_to)
 ORDER BY e.tx_id, e.seq $$;

-- One element of consumer_next's events: the event as `consume` prints it
-- (src/process/ndjson.cpp), the payload as stored. Text, built by joining
-- strings: json_build_object looks up the type of every value of every row,
-- and costs the server 17 % more per event (bench/consume). It is valid
-- JSON: a source's name holds only [A-Za-z0-9._-] (the sources' CHECK), an
-- after-id source's key is its id's digits, any other key is escaped by
-- to_json, and the payload is jsonb's own text. Inlined into its callers.
-- Called by: batch_json, read_fresh_json.
CREATE OR REPLACE FUNCTION tributary.event_json(p_seq bigint, p_source text, p_event_id bigint, p_event_key text,
                                                 p_payload jsonb, p_delivery int) RETURNS text
LANGUAGE sql STABLE AS $$
SELECT '{"seq":' || p_seq || ',"source":"' || p_source || '","event_id":' || coalesce(p_event_id::text, 'null')
       || ',"event_key":' || CASE WHEN p_event_id IS NOT NULL THEN '"' || p_event_key || '"'
                                  ELSE to_json(p_event_key)::text END
       || ',"payload":' || p_payload::text || ',"delivery":' || p_delivery || '}' $$;

-- The events of a batch that is already in the table, as consumer_next
-- hands them out: one JSON array in log order.
-- Called by: consumer_next.
CREATE OR REPLACE FUNCTION tributary.batch_json(b tributary.consumer_batches) RETURNS text
LANGUAGE sql STABLE AS $$
SELECT '[' || string_agg(tributary.event_json(e.seq, s.name, e.event_id, coalesce(e.event_key, e.event_id::text),
                                              e.payload, b.delivery), ',' ORDER BY e.tx_id, e.seq) || ']'
  FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id
 WHERE e.seq = ANY (b.seqs)
   AND e.tx_id BETWEEN tributary.tx_from(b.tx_from) AND tributary.tx_to(b.tx_to) $$;

-- A random wait before the next delivery of an event delivered p_deliveries
-- times: up to retry_base * 2^(deliveries-1), capped (full jitter, so that
-- events failed together do not come back together).
-- Called by: fail_events.
CREATE OR REPLACE FUNCTION tributary.retry_delay(g tributary.consumer_groups, p_deliveries int) RETURNS interval
LANGUAGE sql VOLATILE AS $$
SELECT random() * least(g.retry_cap, g.retry_base * power(2, least(greatest(p_deliveries - 1, 0), 30))) $$;

-- Events p_seqs of batch b (already deleted by the caller) failed with
-- p_error. A single-event delivery that reached max_deliveries goes to the
-- dead letters; anything else waits to be retried alone, after a backoff
-- (p_backoff) or at once. Events of a multi-event batch are never
-- dead-lettered from it: a poison event must not take its neighbours along.
-- Called by: take_over_expired, consumer_ack, consumer_fail.
CREATE OR REPLACE FUNCTION tributary.fail_events(g tributary.consumer_groups, b tributary.consumer_batches,
                                                  p_seqs bigint[], p_error text, p_backoff boolean) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(b.seqs) = 1 AND b.delivery >= g.max_deliveries THEN
        INSERT INTO tributary.consumer_dead_letters AS d (group_id, seq, deliveries, last_error, tx_from, tx_to)
        VALUES (g.id, b.seqs[1], b.delivery, p_error, b.tx_from, b.tx_to)
        ON CONFLICT (group_id, seq) DO UPDATE    -- dead before a group_reset, and again
            SET deliveries = excluded.deliveries, last_error = excluded.last_error, failed_at = now(),
                tx_from = excluded.tx_from, tx_to = excluded.tx_to;
        RETURN;
    END IF;
    INSERT INTO tributary.consumer_retries AS r (group_id, seq, deliveries, next_attempt_at, last_error, source_id,
                                                 tx_from, tx_to)
    SELECT g.id, x.seq, b.delivery,
           now() + CASE WHEN p_backoff THEN tributary.retry_delay(g, b.delivery) ELSE interval '0' END,
           p_error, x.source_id, b.tx_from, b.tx_to
      FROM unnest(b.seqs, b.source_ids) AS x(seq, source_id)
     WHERE x.seq = ANY (p_seqs)
    ON CONFLICT (group_id, seq) DO UPDATE
        SET deliveries = greatest(r.deliveries, excluded.deliveries),
            next_attempt_at = excluded.next_attempt_at, last_error = excluded.last_error,
            tx_from = excluded.tx_from, tx_to = excluded.tx_to;
END $$;

-- Step 1 of a read: take over one batch whose lease expired (the XAUTOCLAIM
-- of this design). It gets a new token, consumer and lease, delivery + 1;
-- unless it was delivered max_deliveries times already: then its events are
-- split into retries due now (a multi-event batch) or dead-lettered (a single
-- event), and the next expired batch is tried. NULL: none expired. p_lane:
-- only a batch of that lane (a group of lanes, 32_lanes.sql: a batch holds
-- the sources of one lane, so its first source says which).
-- Called by: lease_waiting.
CREATE OR REPLACE FUNCTION tributary.take_over_expired(g tributary.consumer_groups, p_consumer text, p_lane int)
RETURNS tributary.consumer_batches
LANGUAGE plpgsql AS $$
DECLARE
    v_batch tributary.consumer_batches;
    v_lanes int := CASE WHEN p_lane IS NOT NULL THEN tributary.lanes_of(g) END;
BEGIN
    LOOP
        -- SKIP LOCKED: consumers racing for expired batches each get another one.
        SELECT * INTO v_batch FROM tributary.consumer_batches b
         WHERE b.group_id = g.id AND b.leased_until < now()
           AND (p_lane IS NULL OR tributary.lane_of(b.source_ids[1], v_lanes) = p_lane)
         ORDER BY b.leased_until LIMIT 1
           FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            RETURN NULL;
        END IF;
        IF v_batch.delivery < g.max_deliveries THEN
            UPDATE tributary.consumer_batches b
               SET consumer = p_consumer, lease_token = gen_random_uuid(), leased_until = now() + g.lease,
                   delivery = b.delivery + 1
             WHERE b.id = v_batch.id
            RETURNING * INTO v_batch;
            RETURN v_batch;
        END IF;
        DELETE FROM tributary.consumer_batches b WHERE b.id = v_batch.id;
        PERFORM tributary.fail_events(g, v_batch, v_batch.seqs,
                                      format('lease expired %s times (last held by %s)', v_batch.delivery, v_batch.consumer),
                                      false);
    END LOOP;
END $$;

-- Step 2 of a read: one retry that is due, delivered alone (its row moves into
-- the batch while the batch holds it). In an ordered group only the oldest
-- event of a source that has no batch in flight may go. NULL: none due.
-- p_lane: only a retry of that lane's sources.
-- Called by: lease_waiting.
CREATE OR REPLACE FUNCTION tributary.deliver_due_retry(g tributary.consumer_groups, p_consumer text, p_lane int)
RETURNS tributary.consumer_batches
LANGUAGE plpgsql AS $$
DECLARE
    v_retry tributary.consumer_retries;
    v_batch tributary.consumer_batches;
    v_lanes int := CASE WHEN p_lane IS NOT NULL THEN tributary.lanes_of(g) END;
BEGIN
    SELECT * INTO v_retry FROM tributary.consumer_retries r
     WHERE r.group_id = g.id AND r.next_attempt_at <= now()
       AND (p_lane IS NULL OR tributary.lane_of(r.source_id, v_lanes) = p_lane)
       AND (NOT g.ordered OR (
            NOT EXISTS (SELECT 1 FROM tributary.consumer_batches b
                         WHERE b.group_id = g.id AND r.source_id = ANY (b.source_ids))
        AND NOT EXISTS (SELECT 1 FROM tributary.consumer_retries older
                         WHERE older.group_id = g.id AND older.source_id = r.source_id AND older.seq < r.seq)))
     ORDER BY r.next_attempt_at LIMIT 1
       FOR UPDATE SKIP LOCKED;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    DELETE FROM tributary.consumer_retries r WHERE r.group_id = g.id AND r.seq = v_retry.seq;
    INSERT INTO tributary.consumer_batches (group_id, consumer, lease_token, leased_until, delivery, seqs, source_ids,
                                            tx_from, tx_to)
    VALUES (g.id, p_consumer, gen_random_uuid(), now() + g.lease, v_retry.deliveries + 1,
            ARRAY[v_retry.seq], ARRAY[v_retry.source_id], v_retry.tx_from, v_retry.tx_to)
    RETURNING * INTO v_batch;
    RETURN v_batch;
END $$;

-- The arguments every read takes, checked.
-- Called by: consumer_read, consumer_next.
CREATE OR REPLACE FUNCTION tributary.check_read_arguments(p_consumer text, p_max int) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_consumer IS NULL OR p_consumer = '' THEN
        RAISE EXCEPTION 'name the consumer (any text that identifies it, e.g. host:pid)' USING ERRCODE = '22023';
    END IF;
    IF p_max IS NULL OR p_max NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'invalid batch size %: use 1 to 100000', p_max USING ERRCODE = '22023';
    END IF;
END $$;

-- Steps 1 and 2 of a read: a batch whose lease expired, taken over, or else
-- one due retry. NULL: neither; the read takes fresh events (lease_fresh).
-- p_lane: of that lane only.
-- Called by: consumer_read, consumer_next, lane_lease.
CREATE OR REPLACE FUNCTION tributary.lease_waiting(g tributary.consumer_groups, p_consumer text, p_lane int)
RETURNS tributary.consumer_batches
LANGUAGE plpgsql AS $$
DECLARE
    v_batch tributary.consumer_batches := tributary.take_over_expired(g, p_consumer, p_lane);
BEGIN
    IF v_batch.id IS NULL THEN
        v_batch := tributary.deliver_due_retry(g, p_consumer, p_lane);
    END IF;
    RETURN v_batch;
END $$;

-- The forms without the lane, as before migration 0017: kept, not dropped,
-- so that a call already planned by a session when `migrate` replaces the
-- definitions still finds its function (the callers above call the forms
-- with the lane).
-- Called by: nothing of this release.
CREATE OR REPLACE FUNCTION tributary.take_over_expired(g tributary.consumer_groups, p_consumer text)
RETURNS tributary.consumer_batches
LANGUAGE sql AS $$ SELECT tributary.take_over_expired(g, p_consumer, NULL::int) $$;
CREATE OR REPLACE FUNCTION tributary.deliver_due_retry(g tributary.consumer_groups, p_consumer text)
RETURNS tributary.consumer_batches
LANGUAGE sql AS $$ SELECT tributary.deliver_due_retry(g, p_consumer, NULL::int) $$;
CREATE OR REPLACE FUNCTION tributary.lease_waiting(g tributary.consumer_groups, p_consumer text)
RETURNS tributary.consumer_batches
LANGUAGE sql AS $$ SELECT tributary.lease_waiting(g, p_consumer, NULL::int) $$;
CREATE OR REPLACE FUNCTION tributary.busy_sources(p_group_id int) RETURNS int[]
LANGUAGE sql STABLE AS $$
SELECT ARRAY(SELECT unnest(b.source_ids) FROM tributary.consumer_batches b WHERE b.group_id = p_group_id
             UNION
             SELECT r.source_id FROM tributary.consumer_retries r WHERE r.group_id = p_group_id) $$;

-- Sources an ordered group may not hand out now: a batch in flight or a retry
-- waiting. p_lane: of that lane's sources only (a batch leased before the lane
-- changed hands still counts: its sources are the lane's). PL/pgSQL, not
-- SQL, for lanes_of (see lanes_in_place).
-- Called by: lease_fresh.
CREATE OR REPLACE FUNCTION tributary.busy_sources(g tributary.consumer_groups, p_lane int) RETURNS int[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_lanes int := CASE WHEN p_lane IS NOT NULL THEN tributary.lanes_of(g) END;
BEGIN
    RETURN ARRAY(SELECT unnest(b.source_ids) FROM tributary.consumer_batches b
                  WHERE b.group_id = g.id AND (p_lane IS NULL OR tributary.lane_of(b.source_ids[1], v_lanes) = p_lane)
                 UNION
                 SELECT r.source_id FROM tributary.consumer_retries r
                  WHERE r.group_id = g.id AND (p_lane IS NULL OR tributary.lane_of(r.source_id, v_lanes) = p_lane));
END $$;
