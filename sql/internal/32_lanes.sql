-- Lanes (issue 28, migration 0017): a group of N lanes reads the events of
-- source s in lane s % N, each lane with its own cursor, held by one consumer
-- at a time. The steps of consumer_next and consumer_read for such a group;
-- a group of one lane reads as before (31_fresh_reads.sql).
--
-- Why lanes: a group's fresh reads take turns on the row that holds its
-- cursor, so consumers of one group add no read throughput, and an ordered
-- group's fresh reads stop at a failing source's next event for every
-- source. A lane's fresh reads take turns only on the lane's row, among the
-- one consumer that holds it; a failing source holds back only its lane.
--
-- Internal (sql/internal/): steps of the public functions. Nothing outside
-- tributary should call them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- lane_events_json read a fresh batch for consumer_next; lane_batch_json
-- reads every batch of a lane for it (lane_batch_events for consumer_read).
DROP FUNCTION IF EXISTS tributary.lane_events_json(tributary.consumer_groups, int, tributary.consumer_batches, xid8,
                                                   bit varying, jsonb);

-- The index a group of p_lanes lanes reads through: ((source_id % p_lanes),
-- tx_id, seq), so a lane's fresh events are one range of it in log order,
-- however many lanes and sources there are (the read of a group of one lane
-- is one range of events_tx_seq). One per lane count in use: every event
-- written pays for each, so groups of lanes are best given one count.
-- Called by: ensure_lane_index, drop_lane_index_unless_used.
CREATE OR REPLACE FUNCTION tributary.lane_index_name(p_lanes int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT 'events_lanes_' || p_lanes $$;

-- Creates the index of p_lanes lanes if it is missing. On a log that holds
-- many events this reads them all, and writers wait meanwhile (CREATE INDEX
-- on a partitioned table cannot be CONCURRENTLY): docs/operations.md.
-- Called by: group_create.
CREATE OR REPLACE FUNCTION tributary.ensure_lane_index(p_lanes int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    -- On Citus a lane is a shard, read through the shard's own (tx_id, seq)
    -- index: no lane index (lanes_by_shard).
    IF tributary.lanes_by_shard() THEN
        RETURN;
    END IF;
    IF to_regclass('tributary.' || tributary.lane_index_name(p_lanes)) IS NULL THEN
        EXECUTE format('CREATE INDEX %I ON tributary.events ((source_id %% %s), tx_id, seq)',
                       tributary.lane_index_name(p_lanes), p_lanes);
    END IF;
    PERFORM tributary.make_lane_readers(p_lanes);
END $$;

-- Drops the index of p_lanes lanes, and its readers, when no group of that
-- many lanes is left (an index nobody reads costs every write).
-- Called by: group_delete.
CREATE OR REPLACE FUNCTION tributary.drop_lane_index_unless_used(p_lanes int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF p_lanes > 1 AND NOT EXISTS (SELECT FROM tributary.consumer_groups g WHERE g.lanes = p_lanes) THEN
        EXECUTE format('DROP INDEX IF EXISTS tributary.%I', tributary.lane_index_name(p_lanes));
        PERFORM tributary.drop_lane_readers(p_lanes);
    END IF;
END $$;

-- The range of lane p_lane of p_lanes lanes that a read takes, as the text
-- that follows a statement's select list: $1 the lane, ($2, $3) the cursor,
-- $4 the watermark, $5 the sources (NULL: all), $6 the most events, $7 the
-- one seq wanted (NULL: any). The lane count is written in, for the planner
-- to match the lane index.
-- Called by: lane_readers_sql, lane_backlog_capped.
CREATE OR REPLACE FUNCTION tributary.lane_range_sql(p_lanes int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT format($q$
  FROM tributary.events e
 WHERE e.source_id %% %s = $1
   AND (e.tx_id, e.seq) > ($2, $3)
   AND e.tx_id >= $2
   AND e.tx_id < $4
   AND ($5::bit varying IS NULL OR (e.source_id < length($5) AND get_bit($5, e.source_id) = 1))
   AND ($7::bigint IS NULL OR e.seq = $7)
 ORDER BY e.tx_id, e.seq
 LIMIT $6 $q$, p_lanes) $$;

-- The same range on Citus, where a lane is a shard of the log
-- (lanes_by_shard): its sources p_ids written in, so that Citus sends the
-- read whole to the shard's worker ($1 and $5 are not used). Planned at every
-- call, by Citus too: the ids must be known to find the shard.
-- Called by: lane_fresh_arrays, lane_batch_events, lane_batch_json, lane_backlog_capped.
CREATE OR REPLACE FUNCTION tributary.lane_range_sql_by_shard(p_ids int[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT format($q$
  FROM tributary.events e
 WHERE e.source_id = ANY (%L::int[])
   AND (e.tx_id, e.seq) > ($2, $3)
   AND e.tx_id >= $2
   AND e.tx_id < $4
   AND ($7::bigint IS NULL OR e.seq = $7)
 ORDER BY e.tx_id, e.seq
 LIMIT $6 $q$, p_ids) $$;

-- The readers of the lanes of a group of p_lanes lanes, one function per
-- lane count: lane_fresh_arrays_N, lane_batch_json_N, lane_batch_events_N
-- (what lane_fresh_arrays, lane_batch_json and lane_batch_events do, which
-- call them). Their parameters are lane_range_sql's $1..$7, in its order, so
-- its text is their static SQL, with the lane count written in for the
-- planner to match the lane index.
-- Why generated: a statement with the lane count as a parameter cannot use
-- the lane index, and one made with EXECUTE is planned at every call, over
-- every partition its bounds cover (about 0.1 ms a partition; a lane's batch
-- of 64 lanes crosses 64 partitions of issue 16's log). Static SQL in a
-- function of its own is planned once per session: a generic plan
-- (plan_cache_mode), whose partitions outside the bounds are pruned when it
-- starts. No sort and no bitmap: until ANALYZE has seen the lane index, the
-- planner takes a lane for 0.5 % of the rows, and would rather gather them
-- all and sort than walk the index in order (measured: 75 ms against 1 ms
-- for 1000 of 25 000 events).
-- A release that changes a reader's parameters or result must drop it first
-- (CREATE OR REPLACE cannot rename a parameter or change a result).
-- Called by: make_lane_readers.
CREATE OR REPLACE FUNCTION tributary.lane_readers_sql(p_lanes int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT format($f$
CREATE OR REPLACE FUNCTION tributary.lane_fresh_arrays_%1$s(int, xid8, bigint, xid8, bit varying, int, bigint,
                                                         OUT seqs bigint[], OUT source_ids int[], OUT tx_ids xid8[])
LANGUAGE plpgsql STABLE SET enable_sort = off SET enable_bitmapscan = off SET plan_cache_mode = force_generic_plan
AS $b$
BEGIN
    SELECT array_agg(f.seq), array_agg(f.source_id), array_agg(f.tx_id) INTO seqs, source_ids, tx_ids
      FROM (SELECT e.seq, e.tx_id, e.source_id %2$s) f;
END $b$;
CREATE OR REPLACE FUNCTION tributary.lane_batch_json_%1$s(int, xid8, bigint, xid8, bit varying, int, bigint,
                                                       p_names jsonb, p_delivery int) RETURNS text
LANGUAGE plpgsql STABLE SET enable_sort = off SET enable_bitmapscan = off SET plan_cache_mode = force_generic_plan
AS $b$
BEGIN
    RETURN (SELECT '[' || string_agg(tributary.event_json(f.seq, p_names ->> f.source_id::text, f.event_id,
                                                          f.event_key, f.payload, p_delivery), ',') || ']'
              FROM (SELECT e.seq, e.source_id, e.event_id, coalesce(e.event_key, e.event_id::text) AS event_key,
                           e.payload %2$s) f);
END $b$;
CREATE OR REPLACE FUNCTION tributary.lane_batch_events_%1$s(int, xid8, bigint, xid8, bit varying, int, bigint)
RETURNS TABLE (seq bigint, tx_id xid8, source_id int, event_id bigint, event_key text, payload jsonb,
               loaded_at timestamptz)
LANGUAGE plpgsql STABLE SET enable_sort = off SET enable_bitmapscan = off SET plan_cache_mode = force_generic_plan
AS $b$
BEGIN
    RETURN QUERY SELECT e.seq, e.tx_id, e.source_id, e.event_id, coalesce(e.event_key, e.event_id::text), e.payload,
                        e.loaded_at %2$s;
END $b$;
$f$, p_lanes, tributary.lane_range_sql(p_lanes)) $$;

-- Creates (or brings up to date) the readers of p_lanes lanes
-- (lane_readers_sql), for tributary's roles alone: PostgreSQL lets PUBLIC
-- execute a new function, and sql/privileges/ runs only at `migrate`.
-- Called by: ensure_lane_index, and at the end of this file for every lane
-- count in use (so `migrate` brings them to this release).
CREATE OR REPLACE FUNCTION tributary.make_lane_readers(p_lanes int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE tributary.lane_readers_sql(p_lanes);
    EXECUTE format('REVOKE ALL ON FUNCTION tributary.lane_fresh_arrays_%1$s, tributary.lane_batch_json_%1$s,'
                   ' tributary.lane_batch_events_%1$s FROM PUBLIC', p_lanes);
END $$;

-- Drops the readers of p_lanes lanes (no group of that many lanes is left).
-- Called by: drop_lane_index_unless_used.
CREATE OR REPLACE FUNCTION tributary.drop_lane_readers(p_lanes int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DROP FUNCTION IF EXISTS tributary.lane_fresh_arrays_%1$s, tributary.lane_batch_json_%1$s,'
                   ' tributary.lane_batch_events_%1$s', p_lanes);
END $$;

-- Lane p_lane's share of fresh_events (31_fresh_reads.sql): the first p_max
-- events of the lane after g's cursor (the lane's, put into g by the caller)
-- below p_watermark, of the sources set in p_sources, as three arrays in log
-- order (aggregated in the statement itself: a set returned from here would
-- be stored once more before its caller aggregated it), read by the reader
-- of g's lane count (lane_readers_sql).
-- Called by: lease_fresh.
CREATE OR REPLACE FUNCTION tributary.lane_fresh_arrays(g tributary.consumer_groups, p_lane int, p_watermark xid8,
                                                        p_sources bit varying, p_max int,
                                                        OUT seqs bigint[], OUT source_ids int[], OUT tx_ids xid8[])
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_ids int[];
BEGIN
    IF tributary.lanes_by_shard() THEN
        -- p_sources: the lane's own (lease_fresh).
        v_ids := tributary.bit_ids(p_sources);
        IF cardinality(v_ids) > 0 THEN
            EXECUTE 'SELECT array_agg(f.seq), array_agg(f.source_id), array_agg(f.tx_id)'
                    ' FROM (SELECT e.seq, e.tx_id, e.source_id' || tributary.lane_range_sql_by_shard(v_ids) || ') f'
               INTO seqs, source_ids, tx_ids
              USING p_lane, g.cursor_tx, g.cursor_seq, p_watermark, p_sources, p_max, NULL::bigint;
        END IF;
        RETURN;
    END IF;
    EXECUTE format('SELECT * FROM tributary.lane_fresh_arrays_%s($1, $2, $3, $4, $5, $6, $7)', g.lanes)
       INTO seqs, source_ids, tx_ids
      USING p_lane, g.cursor_tx, g.cursor_seq, p_watermark, p_sources, p_max, NULL::bigint;
END $$;

-- lane_fresh_events returned the rows (before lane_fresh_arrays).
DROP FUNCTION IF EXISTS tributary.lane_fresh_events(tributary.consumer_groups, int, xid8, bit varying, int);

-- Whether lane p_lane of group g has a batch in flight (a batch holds the
-- sources of one lane, so its first source says which).
-- Called by: hold_lane_share, consumer_leave.
CREATE OR REPLACE FUNCTION tributary.lane_has_batches(g tributary.consumer_groups, p_lane int) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    -- PL/pgSQL, not SQL: see lanes_of.
    RETURN EXISTS (SELECT FROM tributary.consumer_batches b
                    WHERE b.group_id = g.id AND tributary.lane_of(b.source_ids[1], tributary.lanes_of(g)) = p_lane);
END $$;

-- A consumer's share of the lanes of group g: ceil(lanes / consumers
-- alive). PL/pgSQL, not SQL: see lanes_of.
-- Called by: hold_lane_share, consumer_awaits_lanes.
CREATE OR REPLACE FUNCTION tributary.lane_share(g tributary.consumer_groups) RETURNS int
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN ceil(g.lanes::numeric / greatest((SELECT count(*) FROM tributary.group_consumers c
                                              WHERE c.group_id = g.id AND c.seen_until > now()), 1));
END $$;

-- How many lanes of group g consumer p_consumer holds now. PL/pgSQL, not
-- SQL: see lanes_of.
-- Called by: hold_lane_share, consumer_awaits_lanes.
CREATE OR REPLACE FUNCTION tributary.lanes_held(g tributary.consumer_groups, p_consumer text) RETURNS int
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN (SELECT count(*) FROM tributary.group_lanes l
             WHERE l.group_id = g.id AND l.holder = p_consumer AND l.held_until > now());
END $$;

-- The consumer p_consumer of group g (of lanes) is alive, and holds its
-- share of the lanes: ceil(lanes / consumers alive). It says it is alive
-- for one lease of the group; renews the lanes it holds; gives back the
-- lanes beyond its share (a consumer has joined), or takes lanes nobody
-- holds (or whose holder's lease ran out) up to it. So a consumer that joins
-- gets lanes once the others have read again, and the lanes of one that
-- died are taken one lease after its last read. A lane has one holder at a
-- time (one column); SKIP LOCKED keeps consumers taking lanes at once from
-- waiting on each other. Writes only what changes.
-- Called by: lane_lease.
CREATE OR REPLACE FUNCTION tributary.hold_lane_share(g tributary.consumer_groups, p_consumer text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_seen timestamptz;
    v_share int;
    v_held int;
BEGIN
    SELECT c.seen_until INTO v_seen FROM tributary.group_consumers c
     WHERE c.group_id = g.id AND c.consumer = p_consumer;
    IF v_seen IS NULL OR v_seen < now() + g.lease / 2 THEN
        DELETE FROM tributary.group_consumers c WHERE c.group_id = g.id AND c.seen_until < now() - g.lease;
        INSERT INTO tributary.group_consumers AS c (group_id, consumer, seen_until)
        VALUES (g.id, p_consumer, now() + g.lease)
        ON CONFLICT (group_id, consumer) DO UPDATE SET seen_until = excluded.seen_until;
    END IF;
    v_share := tributary.lane_share(g);
    UPDATE tributary.group_lanes l SET held_until = now() + g.lease
     WHERE l.group_id = g.id AND l.holder = p_consumer AND l.held_until > now() AND l.held_until < now() + g.lease / 2;
    v_held := tributary.lanes_held(g, p_consumer);
    IF v_held > v_share THEN
        -- Not a lane with a batch in flight: it goes once its batches are
        -- settled (a lane is held as long as its batches are leased).
        UPDATE tributary.group_lanes l SET holder = NULL, held_until = NULL
         WHERE l.group_id = g.id
           AND l.lane IN (SELECT m.lane FROM tributary.group_lanes m
                           WHERE m.group_id = g.id AND m.holder = p_consumer AND m.held_until > now()
                             AND NOT tributary.lane_has_batches(g, m.lane)
                           ORDER BY m.lane DESC LIMIT v_held - v_share);
    ELSIF v_held < v_share THEN
        UPDATE tributary.group_lanes l SET holder = p_consumer, held_until = now() + g.lease
         WHERE l.group_id = g.id
           AND l.lane IN (SELECT f.lane FROM tributary.group_lanes f
                           WHERE f.group_id = g.id AND (f.holder IS NULL OR f.held_until <= now())
                           ORDER BY f.lane LIMIT v_share - v_held
                             FOR UPDATE SKIP LOCKED);
    END IF;
END $$;

-- The next batch for consumer p_consumer of group g (of lanes), from one of
-- the lanes it holds: in each, as in a group of one lane, a batch whose lease
-- expired, else a due retry, else fresh events; the lanes whose last read
-- filled a batch first, then the one read least lately. batch NULL: nothing
-- to do in its lanes now (or it holds none: more consumers than lanes); lane:
-- the lane it came from; names: the names of the batch's sources by id. For
-- fresh events also the read's watermark and sources, as lease_fresh gives
-- them (lane_batch_events reads the batch again with them); NULL for a batch
-- that was waiting.
-- Called by: lane_lease_guarded.
CREATE OR REPLACE FUNCTION tributary.lane_lease(g tributary.consumer_groups, p_consumer text, p_max int,
                                                 OUT batch tributary.consumer_batches, OUT lane int, OUT watermark xid8,
                                                 OUT sources bit varying, OUT names jsonb)
LANGUAGE plpgsql AS $$
#variable_conflict use_variable
DECLARE
    v_lane record;    -- a row of tributary.group_lanes (a record: see lanes_of)
    v_fresh record;
    -- On Citus, the lanes of the workers this session skips for now
    -- (33_unreachable_workers.sql).
    v_unreachable int[] := tributary.unreachable_lanes();
BEGIN
    PERFORM tributary.hold_lane_share(g, p_consumer);
    FOR v_lane IN SELECT * FROM tributary.group_lanes l
                   WHERE l.group_id = g.id AND l.holder = p_consumer AND l.held_until > now()
                     AND l.lane <> ALL (v_unreachable)
                   ORDER BY l.backlogged DESC, l.read_at NULLS FIRST, l.lane LOOP
        lane := v_lane.lane;
        batch := tributary.lease_waiting(g, p_consumer, lane);
        IF batch.id IS NOT NULL AND tributary.lanes_by_shard() THEN
            -- Its events are read on the lane's worker after this returns:
            -- a worker that is down must fail here, under lane_lease_guarded's
            -- savepoint, or the batch would come first again at every call.
            PERFORM tributary.lane_watermark(lane);
        END IF;
        IF batch.id IS NOT NULL THEN
            -- Held as long as the batch is leased (see lease_fresh).
            UPDATE tributary.group_lanes l SET held_until = greatest(l.held_until, batch.leased_until)
             WHERE l.group_id = g.id AND l.lane = lane AND l.holder = p_consumer;
            names := tributary.source_names(batch.source_ids);
            RETURN;
        END IF;
        -- The lane's row locked, as a group's row for a group of one lane:
        -- a holder that lost the lane meanwhile finds it no longer its own.
        SELECT * INTO v_lane FROM tributary.group_lanes l
         WHERE l.group_id = g.id AND l.lane = lane AND l.holder = p_consumer
           FOR NO KEY UPDATE;
        CONTINUE WHEN NOT FOUND;
        g.cursor_tx := v_lane.cursor_tx;
        g.cursor_seq := v_lane.cursor_seq;
        g.source_bits := v_lane.source_bits;
        SELECT * INTO v_fresh FROM tributary.lease_fresh(g, p_consumer, p_max, lane) l;
        IF (v_fresh.batch).id IS NOT NULL THEN
            batch := v_fresh.batch;
            watermark := v_fresh.watermark;
            sources := v_fresh.sources;
            names := v_fresh.names;
            RETURN;
        END IF;
    END LOOP;
    lane := NULL;
END $$;

-- The sources p_ids as bits (bit i set: source i is one), as
-- matching_source_bits gives a pattern's.
-- Called by: lane_batch_bounds.
CREATE OR REPLACE FUNCTION tributary.source_bits(p_ids int[]) RETURNS bit varying
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_bits bit varying := repeat('0', (SELECT max(i) FROM unnest(p_ids) i) + 1)::bit varying;
    v_id int;
BEGIN
    FOREACH v_id IN ARRAY p_ids LOOP
        v_bits := set_bit(v_bits, v_id, 1);
    END LOOP;
    RETURN v_bits;
END $$;

-- Where the events of batch b of lane p_lane lie (lane_range_sql's $4, $5,
-- $7), read again as one range of the lane index, never by looking up each
-- seq (a lane's batch spans partitions: a lookup of 1000 seqs in 64 of them
-- took 25-300 ms). Always bounded by the batch's last transaction, so the
-- read starts no partition past it (a fresh read may have spanned many
-- more). A fresh batch (p_watermark and p_sources as lane_lease gave them):
-- the first cardinality(b.seqs) events of the lane after the point just
-- before its first, of p_sources (below p_watermark, where the read that
-- found them ended: every one of them lies at or below b.tx_to). A batch
-- that waited (p_watermark NULL): one of many events holds every event of
-- its sources from its first to its last (a fresh read took them all, and a
-- batch keeps its events when taken over), so the same range with its own
-- sources; one of one event (a retry, whose bounds are its first batch's)
-- is the event with its seq in that range.
-- Called by: lane_batch_events, lane_batch_json.
CREATE OR REPLACE FUNCTION tributary.lane_batch_bounds(b tributary.consumer_batches, p_watermark xid8,
                                                       p_sources bit varying,
                                                       OUT watermark xid8, OUT sources bit varying, OUT seq bigint)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    watermark := (b.tx_to::text::numeric + 1)::text::xid8;
    sources := p_sources;
    IF p_watermark IS NULL THEN
        IF cardinality(b.seqs) = 1 THEN
            seq := b.seqs[1];
        ELSE
            sources := tributary.source_bits(b.source_ids);
        END IF;
    END IF;
END $$;

-- The events of batch b of lane p_lane of group g as rows, in log order
-- (lane_batch_bounds), read by the reader of g's lane count
-- (lane_readers_sql).
-- Called by: consumer_read.
CREATE OR REPLACE FUNCTION tributary.lane_batch_events(g tributary.consumer_groups, p_lane int,
                                                        b tributary.consumer_batches, p_watermark xid8,
                                                        p_sources bit varying)
RETURNS TABLE (seq bigint, tx_id xid8, source_id int, event_id bigint, event_key text, payload jsonb,
               loaded_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v record := tributary.lane_batch_bounds(b, p_watermark, p_sources);
BEGIN
    IF tributary.lanes_by_shard() THEN
        RETURN QUERY EXECUTE
            'SELECT e.seq, e.tx_id, e.source_id, e.event_id, coalesce(e.event_key, e.event_id::text), e.payload,'
            ' e.loaded_at' || tributary.lane_range_sql_by_shard(coalesce(tributary.bit_ids(v.sources), b.source_ids))
            USING p_lane, b.tx_from, b.seqs[1] - 1, v.watermark, v.sources, cardinality(b.seqs), v.seq;
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format('SELECT * FROM tributary.lane_batch_events_%s($1, $2, $3, $4, $5, $6, $7)',
                                tributary.lanes_of(g))
        USING p_lane, b.tx_from, b.seqs[1] - 1, v.watermark, v.sources, cardinality(b.seqs), v.seq;
END $$;

-- The events of batch b of lane p_lane of group g as consumer_next hands
-- them out: one JSON array in log order (see read_fresh_json), made in the
-- statement that reads them (lane_batch_bounds), by the reader of g's lane
-- count (lane_readers_sql). p_names: the names of the
-- batch's sources by id.
-- Called by: consumer_next.
CREATE OR REPLACE FUNCTION tributary.lane_batch_json(g tributary.consumer_groups, p_lane int,
                                                      b tributary.consumer_batches, p_watermark xid8,
                                                      p_sources bit varying, p_names jsonb) RETURNS text
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v record := tributary.lane_batch_bounds(b, p_watermark, p_sources);
    v_events text;
BEGIN
    IF tributary.lanes_by_shard() THEN
        EXECUTE 'SELECT ''['' || string_agg(tributary.event_json(f.seq, $8 ->> f.source_id::text, f.event_id,'
                ' f.event_key, f.payload, $9), '','') || '']'''
                ' FROM (SELECT e.seq, e.source_id, e.event_id, coalesce(e.event_key, e.event_id::text) AS event_key,'
                ' e.payload' || tributary.lane_range_sql_by_shard(coalesce(tributary.bit_ids(v.sources), b.source_ids))
                || ') f'
           INTO v_events
          USING p_lane, b.tx_from, b.seqs[1] - 1, v.watermark, v.sources, cardinality(b.seqs), v.seq, p_names,
                b.delivery;
        RETURN v_events;
    END IF;
    EXECUTE format('SELECT tributary.lane_batch_json_%s($1, $2, $3, $4, $5, $6, $7, $8, $9)', tributary.lanes_of(g))
       INTO v_events
      USING p_lane, b.tx_from, b.seqs[1] - 1, v.watermark, v.sources, cardinality(b.seqs), v.seq, p_names, b.delivery;
    RETURN v_events;
END $$;

-- Lane p_lane's backlog: the lane's events after g's cursor (the lane's,
-- put into g by the caller) of the sources set in p_sources (NULL: all),
-- read through the lane index in log order; oldest: the oldest loaded_at
-- among those read. p_cap NULL: all of them, exactly (capped false).
-- Otherwise counted up to a cap, as group_backlog_capped counts a group's:
-- at most p_cap + 1 of them, in the 8 partitions from the cursor's on (a
-- plan over every partition after a cursor far behind cost 30 ms a lane to
-- make); capped: more than p_cap, or the count stopped at the 8th
-- partition's end while the log goes on (at least). On Citus the count
-- is not bounded by partitions (see v_end), only by the cap.
-- Called by: lane_rows, group_backlog, group_backlog_capped (Citus).
CREATE OR REPLACE FUNCTION tributary.lane_backlog_capped(g tributary.consumer_groups, p_lane int,
                                                         p_sources bit varying, p_cap bigint,
                                                         OUT events bigint, OUT capped boolean,
                                                         OUT oldest timestamptz)
LANGUAGE plpgsql STABLE SET enable_sort = off SET enable_bitmapscan = off AS $$
DECLARE
    -- Not on Citus: the partitions' bounds are the coordinator's
    -- transaction ids, which say nothing of a worker's.
    v_end xid8 := CASE WHEN p_cap IS NOT NULL AND NOT tributary.lanes_by_shard()
                       THEN tributary.partition_end(g.cursor_tx, 8) END;
BEGIN
    IF tributary.lanes_by_shard() THEN
        -- p_sources: the lane's own (lane_rows, group_backlog).
        EXECUTE 'SELECT coalesce(least(count(*), $8), count(*)), coalesce(count(*) > $8, false), min(h.loaded_at)'
                ' FROM (SELECT e.loaded_at' || tributary.lane_range_sql_by_shard(tributary.bit_ids(p_sources)) || ') h'
           INTO events, capped, oldest
          USING p_lane, g.cursor_tx, g.cursor_seq, '18446744073709551615'::xid8, p_sources,
                p_cap + 1, NULL::bigint, p_cap;
        RETURN;
    END IF;
    EXECUTE 'SELECT coalesce(least(count(*), $8), count(*)), coalesce(count(*) > $8, false), min(h.loaded_at)'
            ' FROM (SELECT e.loaded_at' || tributary.lane_range_sql(tributary.lanes_of(g)) || ') h'
       INTO events, capped, oldest
      USING p_lane, g.cursor_tx, g.cursor_seq, coalesce(v_end, '18446744073709551615'::xid8), p_sources, p_cap + 1,
            NULL::bigint, p_cap;
    capped := capped OR coalesce(v_end < pg_snapshot_xmin(pg_current_snapshot()), false);
END $$;

-- How each lane of group g is doing, in lane order (none for a group of one
-- lane): its holder (NULL: nobody holds it now), its backlog
-- (lane_backlog_capped: exact when p_cap is NULL), the age of its oldest
-- event not yet acknowledged (behind, in flight or waiting for a retry; of a
-- batch in flight, its first event's: a lane's batch spans partitions, and
-- its first event is one lookup), its batches in flight and retries.
-- Called by: group_lanes_status, console_lane_rows.
CREATE OR REPLACE FUNCTION tributary.lane_rows(g tributary.consumer_groups, p_cap bigint)
RETURNS TABLE (lane int, holder text, held_until timestamptz, events_behind bigint, events_behind_capped boolean,
               oldest_unprocessed_age interval, batches_in_flight int, retries_waiting int, read_at timestamptz)
LANGUAGE plpgsql STABLE SET jit = off AS $$
DECLARE
    v_lanes int := tributary.lanes_of(g);
    v_bits bit varying;
    v_lane record;    -- a row of tributary.group_lanes (a record: see lanes_of)
    v_behind record;
    v_flight record;
    v_retry record;
BEGIN
    IF v_lanes = 1 THEN
        RETURN;
    END IF;
    IF g.pattern <> '>' THEN
        v_bits := coalesce(g.source_bits, tributary.matching_source_bits(g.pattern));
    END IF;
    FOR v_lane IN SELECT * FROM tributary.group_lanes l WHERE l.group_id = g.id ORDER BY l.lane LOOP
        g.cursor_tx := v_lane.cursor_tx;
        g.cursor_seq := v_lane.cursor_seq;
        SELECT * INTO v_behind
          FROM tributary.lane_backlog_capped(g, v_lane.lane,
                                             CASE WHEN tributary.lanes_by_shard()
                                                  THEN tributary.lane_sources(v_lane.lane, v_bits) ELSE v_bits END,
                                             p_cap);
        SELECT count(*)::int AS batches, min(e.loaded_at) AS oldest INTO v_flight
          FROM tributary.consumer_batches b
          LEFT JOIN tributary.events e ON e.tx_id = b.tx_from AND e.seq = b.seqs[1]
         WHERE b.group_id = g.id AND tributary.lane_of(b.source_ids[1], v_lanes) = v_lane.lane;
        SELECT count(*)::int AS events, min(e.loaded_at) AS oldest INTO v_retry
          FROM tributary.consumer_retries r
          LEFT JOIN tributary.events e
            ON e.seq = r.seq AND e.tx_id BETWEEN tributary.tx_from(r.tx_from) AND tributary.tx_to(r.tx_to)
         WHERE r.group_id = g.id AND tributary.lane_of(r.source_id, v_lanes) = v_lane.lane;
        lane := v_lane.lane;
        holder := CASE WHEN v_lane.held_until > now() THEN v_lane.holder END;
        held_until := v_lane.held_until;
        events_behind := v_behind.events;
        events_behind_capped := v_behind.capped;
        oldest_unprocessed_age := now() - least(v_behind.oldest, v_flight.oldest, v_retry.oldest);
        batches_in_flight := v_flight.batches;
        retries_waiting := v_retry.events;
        read_at := v_lane.read_at;
        RETURN NEXT;
    END LOOP;
END $$;

-- The lowest cursor of group g's lanes, in g (the group's own for a group
-- of one lane): every event below it has been handed out in every lane, so
-- what retention and the backlog count from it is a bound, never too little.
-- Called by: retention_holders, retention_drop.
CREATE OR REPLACE FUNCTION tributary.group_low_cursor(g tributary.consumer_groups) RETURNS tributary.consumer_groups
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF tributary.lanes_of(g) > 1 THEN
        SELECT l.cursor_tx, l.cursor_seq INTO g.cursor_tx, g.cursor_seq
          FROM tributary.group_lanes l WHERE l.group_id = g.id
         ORDER BY l.cursor_tx, l.cursor_seq LIMIT 1;
    END IF;
    RETURN g;
END $$;

-- Lanes of group g that no consumer holds now (0 for a group of one lane):
-- their events wait until a consumer with room reads.
-- Called by: the view group_status.
CREATE OR REPLACE FUNCTION tributary.unheld_lanes(g tributary.consumer_groups) RETURNS int
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF tributary.lanes_of(g) = 1 THEN
        RETURN 0;
    END IF;
    RETURN (SELECT count(*) FROM tributary.group_lanes l
             WHERE l.group_id = g.id AND (l.holder IS NULL OR l.held_until <= now()));
END $$;

-- Whether migration 0017 has made the lanes' tables and column. The
-- definitions are applied once before migration 0013's last step
-- (src/postgres/migrator.cpp), when groups had no lanes, and consumers keep
-- reading meanwhile: what they run must not name the lanes' column or tables
-- until they exist (a view's columns and a SQL function's body are checked
-- when created, a PL/pgSQL statement when it first runs: so this check, in a
-- statement apart from the names it guards).
-- Called by: lanes_of, consumer_extend, forget_group_sources, the end of this file.
CREATE OR REPLACE FUNCTION tributary.lanes_in_place() RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT to_regclass('tributary.group_lanes') IS NOT NULL $$;

-- g.lanes, or 1 before migration 0017 (lanes_in_place).
-- Called by: the view group_status, consumer_next, consumer_read,
-- deliver_due_retry, busy_sources, group_low_cursor, group_backlog.
CREATE OR REPLACE FUNCTION tributary.lanes_of(g tributary.consumer_groups) RETURNS int
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT tributary.lanes_in_place() THEN
        RETURN 1;
    END IF;
    RETURN g.lanes;
END $$;

-- The readers of every lane count in use, as this release makes them
-- (lane_readers_sql). Not before migration 0017: no group has lanes then,
-- and the lanes' column does not exist (see lanes_in_place).
DO $$
DECLARE
    v_lanes int;
BEGIN
    IF tributary.lanes_in_place() THEN
        FOR v_lanes IN SELECT DISTINCT g.lanes FROM tributary.consumer_groups g WHERE g.lanes > 1 LOOP
            PERFORM tributary.make_lane_readers(v_lanes);
        END LOOP;
    END IF;
END $$;
