-- Fresh events for a consumer group: the step of consumer_read and
-- consumer_next that moves the group's cursor. Calling them alone skips the
-- locking their callers do: the caller holds the group row locked (FOR NO
-- KEY UPDATE), so fresh reads of one group queue and never hand out the same
-- events twice.
--
-- Internal (sql/internal/): steps of the public functions and the loader's
-- own functions. Nothing outside tributary should call them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE, after dropping a function whose
-- result lacks a column added since (a result's shape cannot be replaced).

-- read_fresh's rows gained event_key, last (migration 0008: sources keyed by
-- text have no event_id). A database whose read_fresh returns the older rows
-- gets it anew.
DO $$
BEGIN
    IF to_regprocedure('tributary.read_fresh(tributary.consumer_groups, text, int)') IS NOT NULL
       AND NOT EXISTS (SELECT FROM pg_proc WHERE oid = to_regprocedure('tributary.read_fresh(tributary.consumer_groups, text, int)')
                          AND 'event_key' = ANY (proargnames)) THEN
        DROP FUNCTION tributary.read_fresh(tributary.consumer_groups, text, int);
    END IF;
END $$;

-- The names of the sources p_ids, by id (as text): {"7": "orders.eu", ...}.
-- Called by: lease_fresh, lane_lease.
CREATE OR REPLACE FUNCTION tributary.source_names(p_ids int[]) RETURNS jsonb
LANGUAGE sql STABLE AS $$
SELECT jsonb_object_agg(s.id, s.name)
  FROM (SELECT DISTINCT unnest(p_ids) AS id) b JOIN tributary.sources s ON s.id = b.id $$;

-- The first p_max events after group g's cursor, in (tx_id, seq) order: one
-- range of the index events_tx_seq. Only events of transactions below
-- p_watermark (the xmin of a snapshot taken before this one: every
-- transaction below it had ended then, so every snapshot since sees the same
-- events below it, and none can join them later), of the sources whose bits
-- are set in p_sources (see matching_source_bits; NULL: every source).
-- event_key is every event's key as text. Inlined into its callers (a plain
-- SQL function), so it costs no call.
-- Called by: lease_fresh, read_fresh, read_fresh_json.
CREATE OR REPLACE FUNCTION tributary.fresh_events(g tributary.consumer_groups, p_watermark xid8,
                                                   p_sources bit varying, p_max int)
RETURNS TABLE (seq bigint, tx_id xid8, source_id int, event_id bigint, event_key text, payload jsonb,
               loaded_at timestamptz)
LANGUAGE sql STABLE AS $$
SELECT e.seq, e.tx_id, e.source_id, e.event_id, coalesce(e.event_key, e.event_id::text), e.payload, e.loaded_at
  FROM tributary.events e
 WHERE (e.tx_id, e.seq) > (g.cursor_tx, g.cursor_seq)
   AND e.tx_id >= g.cursor_tx    -- implied by the line above; said apart, it prunes the partitions below
   AND e.tx_id < p_watermark
   AND (p_sources IS NULL OR (e.source_id < length(p_sources) AND get_bit(p_sources, e.source_id) = 1))
 ORDER BY e.tx_id, e.seq
 LIMIT p_max $$;

-- Step 3 of a read: leases up to p_max fresh events to p_consumer as a new
-- batch and moves the cursor past them, reading only the seqs and sources
-- (the caller reads the events themselves again with fresh_events(g with
-- its cursor just before the batch's first event, (tx_from, seqs[1] - 1),
-- watermark, sources, cardinality(batch.seqs)): the same events, as they
-- are the first that many the group wants after that point, and watermark
-- is where the read that found them ended). batch is NULL when nothing is
-- fresh.
-- names maps the id (as text) of each source in the batch to its name: the
-- reads look names up in it rather than join tributary.sources, whose plan
-- turned on statistics (a nested loop over all the sources for each event,
-- once tributary.sources was analyzed: +0.3 ms a batch with 40 sources).
-- Ordered groups stop before the first event of a busy source (a prefix, so
-- the one cursor stays exact). The busy set is read before the events: it can
-- only shrink meanwhile (new batches of a group come from its own fresh
-- reads, which wait for our lock, or from events already busy), so it may
-- hold back too much for one read, never too little.
-- With p_lane, a lane of a group of lanes (32_lanes.sql): g carries the
-- lane's cursor and cached matches, the events are the lane's
-- (lane_fresh_arrays), and the lane's row is the one moved; the caller holds
-- it locked instead of the group's.
-- Called by: read_fresh, read_fresh_json, lane_lease.
CREATE OR REPLACE FUNCTION tributary.lease_fresh(g tributary.consumer_groups, p_consumer text, p_max int,
                                                  p_lane int,
                                                  OUT batch tributary.consumer_batches, OUT watermark xid8,
                                                  OUT sources bit varying, OUT names jsonb)
LANGUAGE plpgsql AS $$
DECLARE
    v_watermark xid8;
    v_busy int[];
    v_stop_tx xid8;
    v_stop_seq bigint;
    v_count int := 0;
    v_seqs bigint[] := '{}';
    v_source_ids int[] := '{}';
    v_first_tx xid8;
    v_last_tx xid8;
    v_part int;
    v_part_seqs bigint[];
    v_part_sources int[];
    v_part_txs xid8[];
    -- Partitions the next read spans: for a lane, 32 from the start (its
    -- reader's plan is made once, not per read, and a lane's batch crosses
    -- many partitions: lane_readers_sql).
    v_span int := CASE WHEN p_lane IS NULL THEN 1 ELSE 32 END;
    -- On Citus a lane is a shard of the log, read on its worker after that
    -- worker's watermark (lane_watermark: taken before the read, never
    -- after), of the lane's own sources, which Citus needs to find the shard.
    v_by_shard boolean := p_lane IS NOT NULL AND tributary.lanes_by_shard();
BEGIN
    v_watermark := CASE WHEN v_by_shard THEN tributary.lane_watermark(p_lane)
                        ELSE pg_snapshot_xmin(pg_current_snapshot()) END;
    IF v_watermark IS NULL THEN
        RETURN;    -- a lane whose shard is moving, or moved outside tributary (17_shard_moves.sql)
    END IF;
    -- '>' matches every source: nothing to check per event. Any other
    -- pattern: the matches the group keeps, or, when a change to the sources
    -- cleared them (forget_group_sources), matched again and kept. No source
    -- can change while we hold the group's row (the change must clear it),
    -- so matches read now hold for every event below the watermark. On
    -- Citus, a lane keeps its own sources among them, always.
    IF g.pattern <> '>' OR v_by_shard THEN
        sources := g.source_bits;
        IF sources IS NULL THEN
            sources := CASE WHEN g.pattern <> '>' THEN tributary.matching_source_bits(g.pattern) END;
            IF v_by_shard THEN
                sources := tributary.lane_sources(p_lane, sources);
            END IF;
            IF p_lane IS NULL THEN
                UPDATE tributary.consumer_groups gr SET source_bits = sources WHERE gr.id = g.id;
            ELSE
                UPDATE tributary.group_lanes l SET source_bits = sources WHERE l.group_id = g.id AND l.lane = p_lane;
            END IF;
        END IF;
    END IF;
    IF g.ordered THEN
        v_busy := tributary.busy_sources(g, p_lane);
    END IF;
    -- A few partitions at a time: a read starts an index scan in every
    -- partition it spans, however few events it takes, so the first read of
    -- a group of one lane ends where the partition holding the cursor ends
    -- (or at the watermark, if sooner). The batch gathers the reads' events
    -- until it holds p_max, a busy source stops it, or the watermark is
    -- reached: a partition with a few events for the group does not cut the
    -- batch short (with many lanes, each lane's share of a partition is
    -- small). Each read that leaves the batch short spans twice the
    -- partitions of the one before (up to 32): a batch spread thin over many
    -- partitions takes a few reads, not one per partition, and never more
    -- than twice the partitions it needed.
    LOOP
        watermark := least(v_watermark, coalesce(tributary.partition_end(g.cursor_tx, v_span), v_watermark));
        IF p_lane IS NULL THEN
            IF cardinality(v_busy) > 0 THEN
                SELECT f.tx_id, f.seq INTO v_stop_tx, v_stop_seq
                  FROM tributary.fresh_events(g, watermark, sources, p_max - v_count) f
                 WHERE f.source_id = ANY (v_busy)
                 LIMIT 1;
            END IF;
            SELECT array_agg(f.seq ORDER BY f.tx_id, f.seq), array_agg(f.source_id ORDER BY f.tx_id, f.seq),
                   array_agg(f.tx_id ORDER BY f.tx_id, f.seq)
              INTO v_part_seqs, v_part_sources, v_part_txs
              FROM tributary.fresh_events(g, watermark, sources, p_max - v_count) f
             WHERE v_stop_tx IS NULL OR (f.tx_id, f.seq) < (v_stop_tx, v_stop_seq);
            v_part := coalesce(cardinality(v_part_seqs), 0);
        ELSE
            -- The lane's events read once (each read is planned: see
            -- lane_fresh_arrays), and cut before the first of a busy source.
            SELECT f.seqs, f.source_ids, f.tx_ids INTO v_part_seqs, v_part_sources, v_part_txs
              FROM tributary.lane_fresh_arrays(g, p_lane, watermark, sources, p_max - v_count) f;
            v_part := coalesce(cardinality(v_part_seqs), 0);
            FOR i IN 1 .. CASE WHEN cardinality(v_busy) > 0 THEN v_part ELSE 0 END LOOP
                IF v_part_sources[i] = ANY (v_busy) THEN
                    v_stop_tx := v_part_txs[i];
                    v_stop_seq := v_part_seqs[i];
                    v_part := i - 1;
                    EXIT;
                END IF;
            END LOOP;
        END IF;
        IF v_part > 0 THEN
            v_seqs := v_seqs || v_part_seqs[1:v_part];
            v_source_ids := v_source_ids || v_part_sources[1:v_part];
            v_first_tx := coalesce(v_first_tx, v_part_txs[1]);
            v_last_tx := v_part_txs[v_part];    -- in log order: the greatest
            v_count := v_count + v_part;
        END IF;
        EXIT WHEN v_count >= p_max OR v_stop_tx IS NOT NULL OR watermark >= v_watermark;
        g.cursor_tx := watermark;
        g.cursor_seq := 0;
        v_span := least(v_span * 2, 32);
    END LOOP;
    -- A move of the lane's shard marked after its watermark was taken: keep
    -- nothing (17_shard_moves.sql).
    IF v_by_shard THEN
        IF tributary.lane_moving(p_lane) THEN
            watermark := NULL;
            RETURN;
        END IF;
    END IF;
    -- The cursor moves past everything read: to the read's end when it took
    -- all it found (so the events below it that this group does not want are
    -- not scanned again), else to the last event taken, else to the start
    -- of the partition where a busy source stopped an empty read.
    IF v_stop_tx IS NULL AND v_count < p_max THEN
        g.cursor_tx := watermark;
        g.cursor_seq := 0;
    ELSIF v_count > 0 THEN
        g.cursor_tx := v_last_tx;
        g.cursor_seq := v_seqs[v_count];
    END IF;
    IF p_lane IS NULL THEN
        UPDATE tributary.consumer_groups gr SET cursor_tx = g.cursor_tx, cursor_seq = g.cursor_seq
         WHERE gr.id = g.id AND (g.cursor_tx, g.cursor_seq) > (gr.cursor_tx, gr.cursor_seq);
    ELSE
        -- A lane that a busy source stopped is read last of its holder's
        -- lanes next time (lane_lease's order), like one that was read. A
        -- lane is held at least as long as the batch it hands out is leased:
        -- no other consumer may read a source's later events while its
        -- batch is in hand, unless that lease ran out (then the batch is
        -- taken over first).
        UPDATE tributary.group_lanes l
           SET cursor_tx = g.cursor_tx, cursor_seq = g.cursor_seq, read_at = clock_timestamp(),
               backlogged = v_count >= p_max,
               held_until = CASE WHEN v_count > 0 THEN greatest(l.held_until, now() + g.lease) ELSE l.held_until END
         WHERE l.group_id = g.id AND l.lane = p_lane
           AND ((g.cursor_tx, g.cursor_seq) > (l.cursor_tx, l.cursor_seq) OR v_stop_tx IS NOT NULL);
    END IF;
    IF v_count > 0 THEN
        INSERT INTO tributary.consumer_batches (group_id, consumer, lease_token, leased_until, delivery, seqs, source_ids,
                                                tx_from, tx_to)
        VALUES (g.id, p_consumer, gen_random_uuid(), now() + g.lease, 1, v_seqs, v_source_ids, v_first_tx, v_last_tx)
        RETURNING * INTO batch;
        names := tributary.source_names(v_source_ids);
    END IF;
END $$;

-- lease_fresh without the lane, as before migration 0017: kept, not dropped
-- (see take_over_expired's).
-- Called by: nothing of this release.
CREATE OR REPLACE FUNCTION tributary.lease_fresh(g tributary.consumer_groups, p_consumer text, p_max int,
                                                  OUT batch tributary.consumer_batches, OUT watermark xid8,
                                                  OUT sources bit varying, OUT names jsonb)
LANGUAGE sql AS $$ SELECT * FROM tributary.lease_fresh(g, p_consumer, p_max, NULL::int) $$;

-- Step 3 of consumer_read: fresh events as rows, one per event.
-- Called by: consumer_read.
CREATE OR REPLACE FUNCTION tributary.read_fresh(g tributary.consumer_groups, p_consumer text, p_max int)
RETURNS TABLE (batch_id bigint, lease_token uuid, delivery int, seq bigint, source text,
               event_id bigint, payload jsonb, loaded_at timestamptz, event_key text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_lease record;
BEGIN
    SELECT * INTO v_lease FROM tributary.lease_fresh(g, p_consumer, p_max, NULL::int) l;
    IF (v_lease.batch).id IS NULL THEN
        RETURN;
    END IF;
    -- Read again from just before the batch's first event: the read that
    -- found it may have started partitions earlier (lease_fresh).
    g.cursor_tx := (v_lease.batch).tx_from;
    g.cursor_seq := (v_lease.batch).seqs[1] - 1;
    RETURN QUERY
    SELECT (v_lease.batch).id, (v_lease.batch).lease_token, 1, f.seq, v_lease.names ->> f.source_id::text,
           f.event_id, f.payload, f.loaded_at, f.event_key
      FROM tributary.fresh_events(g, v_lease.watermark, v_lease.sources, cardinality((v_lease.batch).seqs)) f
     ORDER BY f.tx_id, f.seq;
END $$;

-- Step 3 of consumer_next: fresh events as one row, the events as one JSON
-- array, as text (see event_json). No row: nothing fresh.
-- Called by: consumer_next.
CREATE OR REPLACE FUNCTION tributary.read_fresh_json(g tributary.consumer_groups, p_consumer text, p_max int)
RETURNS TABLE (batch_id bigint, lease_token uuid, delivery int, events text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_lease record;
BEGIN
    SELECT * INTO v_lease FROM tributary.lease_fresh(g, p_consumer, p_max, NULL::int) l;
    IF (v_lease.batch).id IS NULL THEN
        RETURN;
    END IF;
    -- Read again from just before the batch's first event: the read that
    -- found it may have started partitions earlier (lease_fresh).
    g.cursor_tx := (v_lease.batch).tx_from;
    g.cursor_seq := (v_lease.batch).seqs[1] - 1;
    RETURN QUERY
    -- In log order without a sort: the aggregate takes the rows as
    -- fresh_events' ORDER BY gives them (nothing between them reorders).
    SELECT (v_lease.batch).id, (v_lease.batch).lease_token, 1,
           '[' || string_agg(tributary.event_json(f.seq, v_lease.names ->> f.source_id::text, f.event_id, f.event_key,
                                                  f.payload, 1), ',') || ']'
      FROM tributary.fresh_events(g, v_lease.watermark, v_lease.sources, cardinality((v_lease.batch).seqs)) f;
END $$;
