-- Consumer groups (issue 6): the SQL API over tributary.events. Tables are in
-- migrations/0002_consumer_groups.sql; the semantics are in README.md
-- ("Consumer groups"). Re-applied as a whole by `migrate` when this file
-- changes, so everything here is CREATE OR REPLACE.
--
-- Call these functions in autocommit or READ COMMITTED transactions: a
-- consumer_read must see what other consumers committed a moment ago, and its
-- watermark is only as fresh as its statement's snapshot.
--
-- Errors a caller can fix carry SQLSTATE 22023 (bad argument: exit code 2 in
-- the CLI) or P0002 (no such group).
--
-- The API is what README.md lists: group_*, consumer_*, dead_letter_replay,
-- read_log, log_position, pattern_matches and the two views. The other
-- functions here are its steps; calling them alone skips its locking.

-- Patterns ------------------------------------------------------------------

-- Why a pattern is invalid, or NULL when it is fine. Segments are separated by
-- '.'; '*' is exactly one segment, '>' (last segment only) one or more.
CREATE OR REPLACE FUNCTION tributary.pattern_problem(p_pattern text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT CASE
    WHEN p_pattern IS NULL OR p_pattern = '' THEN 'it is empty'
    WHEN length(p_pattern) > 200 THEN 'it is longer than 200 characters'
    WHEN p_pattern !~ '^[A-Za-z0-9._*>-]+$'
        THEN 'it may hold only letters, digits, ''.'', ''_'', ''-'' and the wildcards ''*'' and ''>'''
    WHEN p_pattern ~ '(^|\.)(\.|$)' THEN 'a segment is empty (two dots, or a dot at either end)'
    WHEN p_pattern ~ '[^.][*>]|[*>][^.]' THEN 'a wildcard must be a whole segment (''orders.*'', not ''orders*'')'
    WHEN p_pattern ~ '>\.' THEN '''>'' may only be the last segment'
END $$;

-- Raises 22023 with a message that says how to write a pattern.
CREATE OR REPLACE FUNCTION tributary.check_pattern(p_pattern text) RETURNS void
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_problem text := tributary.pattern_problem(p_pattern);
BEGIN
    IF v_problem IS NOT NULL THEN
        RAISE EXCEPTION 'invalid pattern ''%'': %', p_pattern, v_problem USING ERRCODE = '22023',
            HINT = 'Segments are separated by ''.''; ''*'' matches one segment, ''>'' (last only) one or more, '
                   '''>'' alone every source: e.g. ''orders.*'', ''orders.>'', ''*.eu''.';
    END IF;
END $$;

-- The anchored regular expression of a valid pattern. Literal segments hold
-- only [A-Za-z0-9_-], which mean themselves in a regular expression.
CREATE OR REPLACE FUNCTION tributary.pattern_regex(p_pattern text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
SELECT '^' || string_agg(CASE t.segment WHEN '*' THEN '[^.]*' WHEN '>' THEN '.*' ELSE t.segment END, '\.'
                         ORDER BY t.n) || '$'
  FROM unnest(string_to_array(p_pattern, '.')) WITH ORDINALITY AS t(segment, n) $$;

CREATE OR REPLACE FUNCTION tributary.pattern_matches(pattern text, name text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    PERFORM tributary.check_pattern(pattern);
    RETURN name ~ tributary.pattern_regex(pattern);
END $$;
COMMENT ON FUNCTION tributary.pattern_matches(text, text) IS
    'Whether a source name matches a group pattern: ''*'' one dot-separated segment, ''>'' (last) the rest.';

-- Ids of the sources a (valid) pattern matches. STABLE, so it reads the
-- snapshot of the statement that calls it: a source and the events that
-- reference it are then seen together. Callers wrap the call in a scalar
-- subquery ((SELECT ...)::int[]), so it runs once per statement, not per event.
CREATE OR REPLACE FUNCTION tributary.matching_sources(p_pattern text) RETURNS int[]
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_regex text := tributary.pattern_regex(p_pattern);
BEGIN
    RETURN ARRAY(SELECT s.id FROM tributary.sources s WHERE s.name ~ v_regex);
END $$;

-- Positions in the log ----------------------------------------------------------

-- A position (tx_id, seq) in the log's (tx_id, seq) order: a reader starting
-- there gets every event after it. 'beginning': before everything. 'end':
-- the current watermark, so every event committed from now on comes after it
-- (with possibly a few committed just before, by transactions that overlapped
-- the oldest one still running). A timestamp: before the first event with
-- loaded_at >= it; events of transactions that started before it but
-- committed after may come too (loaded_at is the transaction's start).
-- Finding a timestamp walks the log from the start: an operator's command,
-- not a hot path.
CREATE OR REPLACE FUNCTION tributary.log_position(p_from text)
RETURNS TABLE (tx_id xid8, seq bigint)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_at timestamptz;
BEGIN
    CASE lower(btrim(coalesce(p_from, '')))
    WHEN 'beginning' THEN
        RETURN QUERY SELECT '0'::xid8, 0::bigint;
    WHEN 'end' THEN
        RETURN QUERY SELECT pg_snapshot_xmin(pg_current_snapshot()), 0::bigint;
    ELSE
        BEGIN
            v_at := p_from::timestamptz;
        EXCEPTION WHEN data_exception THEN
            v_at := NULL;
        END;
        IF v_at IS NULL THEN
            RAISE EXCEPTION 'invalid position ''%''', p_from USING ERRCODE = '22023',
                HINT = 'Use ''beginning'', ''end'' or a timestamp such as ''2026-11-22 09:00:00+00''.';
        END IF;
        -- One statement, and never past the watermark: a transaction still
        -- running may hold events loaded after v_at below the first visible one.
        RETURN QUERY
        SELECT least(first.tx_id, pg_snapshot_xmin(pg_current_snapshot())), 0::bigint
          FROM (SELECT) one
          LEFT JOIN LATERAL (SELECT e.tx_id FROM tributary.events e WHERE e.loaded_at >= v_at
                              ORDER BY e.tx_id, e.seq LIMIT 1) first ON true;
    END CASE;
END $$;

-- Groups ------------------------------------------------------------------------

-- The group named p_name, or P0002.
CREATE OR REPLACE FUNCTION tributary.group_by_name(p_name text) RETURNS tributary.consumer_groups
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_group tributary.consumer_groups;
BEGIN
    SELECT * INTO v_group FROM tributary.consumer_groups g WHERE g.name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no consumer group named ''%''', p_name USING ERRCODE = 'P0002',
            HINT = 'Create it with tributary.group_create(name, pattern) (or `tributary group create`); '
                   'tributary.group_status lists the groups.';
    END IF;
    RETURN v_group;
END $$;

-- NULL for an optional argument means its default, so a client can pass
-- every argument whether the user gave it or not.
CREATE OR REPLACE FUNCTION tributary.group_create(
    p_name text, p_pattern text DEFAULT '>', p_from text DEFAULT 'end',
    p_max_deliveries int DEFAULT 5, p_lease interval DEFAULT '30 seconds',
    p_ordered boolean DEFAULT false) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_pattern text := coalesce(p_pattern, '>');
    v_id int;
BEGIN
    IF p_name IS NULL OR p_name !~ '^[A-Za-z0-9._-]{1,100}$' THEN
        RAISE EXCEPTION 'invalid group name ''%''', p_name USING ERRCODE = '22023',
            HINT = 'Use 1 to 100 letters, digits, ''.'', ''_'' or ''-''.';
    END IF;
    PERFORM tributary.check_pattern(v_pattern);
    IF coalesce(p_max_deliveries, 5) < 1 THEN
        RAISE EXCEPTION 'invalid max deliveries %: it must be at least 1', p_max_deliveries USING ERRCODE = '22023';
    END IF;
    IF coalesce(p_lease, '30 seconds') <= interval '0' THEN
        RAISE EXCEPTION 'invalid lease %: it must be positive, e.g. ''30 seconds''', p_lease USING ERRCODE = '22023';
    END IF;
    INSERT INTO tributary.consumer_groups (name, pattern, max_deliveries, lease, ordered, cursor_tx, cursor_seq)
    SELECT p_name, v_pattern, coalesce(p_max_deliveries, 5), coalesce(p_lease, '30 seconds'),
           coalesce(p_ordered, false), pos.tx_id, pos.seq
      FROM tributary.log_position(coalesce(p_from, 'end')) pos
    ON CONFLICT (name) DO NOTHING
    RETURNING id INTO v_id;
    IF v_id IS NULL THEN
        RAISE EXCEPTION 'consumer group ''%'' already exists', p_name USING ERRCODE = '23505',
            HINT = 'Pick another name, move it with group_reset, or delete it first with group_delete.';
    END IF;
    RETURN v_id;
END $$;

-- Moves the cursor; batches in flight and waiting retries are dropped (their
-- late acks return false). Dead letters stay.
CREATE OR REPLACE FUNCTION tributary.group_reset(p_name text, p_to text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_name);
BEGIN
    IF p_to IS NULL THEN
        RAISE EXCEPTION 'say where to move the group: ''beginning'', ''end'' or a timestamp' USING ERRCODE = '22023';
    END IF;
    -- The group row first, as a fresh read does, so the two queue rather than deadlock.
    PERFORM 1 FROM tributary.consumer_groups g WHERE g.id = v_group.id FOR NO KEY UPDATE;
    DELETE FROM tributary.consumer_batches b WHERE b.group_id = v_group.id;
    DELETE FROM tributary.consumer_retries r WHERE r.group_id = v_group.id;
    UPDATE tributary.consumer_groups g SET cursor_tx = pos.tx_id, cursor_seq = pos.seq
      FROM tributary.log_position(p_to) pos
     WHERE g.id = v_group.id;
END $$;

CREATE OR REPLACE FUNCTION tributary.group_delete(p_name text) RETURNS boolean
LANGUAGE sql AS $$
WITH gone AS (DELETE FROM tributary.consumer_groups g WHERE g.name = p_name RETURNING 1)
SELECT count(*) > 0 FROM gone $$;

-- Reading ---------------------------------------------------------------------

-- The rows consumer_read returns for a batch that is already in the table.
CREATE OR REPLACE FUNCTION tributary.batch_events(b tributary.consumer_batches)
RETURNS TABLE (batch_id bigint, lease_token uuid, delivery int, seq bigint, source text,
               event_id bigint, payload jsonb, loaded_at timestamptz)
LANGUAGE sql STABLE AS $$
SELECT b.id, b.lease_token, b.delivery, e.seq, s.name, e.event_id, e.payload, e.loaded_at
  FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id
 WHERE e.seq = ANY (b.seqs)
 ORDER BY e.tx_id, e.seq $$;

-- A random wait before the next delivery of an event delivered p_deliveries
-- times: up to retry_base * 2^(deliveries-1), capped (full jitter, so that
-- events failed together do not come back together).
CREATE OR REPLACE FUNCTION tributary.retry_delay(g tributary.consumer_groups, p_deliveries int) RETURNS interval
LANGUAGE sql VOLATILE AS $$
SELECT random() * least(g.retry_cap, g.retry_base * power(2, least(greatest(p_deliveries - 1, 0), 30))) $$;

-- Events p_seqs of batch b (already deleted by the caller) failed with
-- p_error. A single-event delivery that reached max_deliveries goes to the
-- dead letters; anything else waits to be retried alone, after a backoff
-- (p_backoff) or at once. Events of a multi-event batch are never
-- dead-lettered from it: a poison event must not take its neighbours along.
CREATE OR REPLACE FUNCTION tributary.fail_events(g tributary.consumer_groups, b tributary.consumer_batches,
                                                  p_seqs bigint[], p_error text, p_backoff boolean) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(b.seqs) = 1 AND b.delivery >= g.max_deliveries THEN
        INSERT INTO tributary.consumer_dead_letters AS d (group_id, seq, deliveries, last_error)
        VALUES (g.id, b.seqs[1], b.delivery, p_error)
        ON CONFLICT (group_id, seq) DO UPDATE    -- dead before a group_reset, and again
            SET deliveries = excluded.deliveries, last_error = excluded.last_error, failed_at = now();
        RETURN;
    END IF;
    INSERT INTO tributary.consumer_retries AS r (group_id, seq, deliveries, next_attempt_at, last_error, source_id)
    SELECT g.id, x.seq, b.delivery,
           now() + CASE WHEN p_backoff THEN tributary.retry_delay(g, b.delivery) ELSE interval '0' END,
           p_error, x.source_id
      FROM unnest(b.seqs, b.source_ids) AS x(seq, source_id)
     WHERE x.seq = ANY (p_seqs)
    ON CONFLICT (group_id, seq) DO UPDATE
        SET deliveries = greatest(r.deliveries, excluded.deliveries),
            next_attempt_at = excluded.next_attempt_at, last_error = excluded.last_error;
END $$;

-- Step 1 of a read: take over one batch whose lease expired (the XAUTOCLAIM
-- of this design). It gets a new token, consumer and lease, delivery + 1;
-- unless it was delivered max_deliveries times already: then its events are
-- split into retries due now (a multi-event batch) or dead-lettered (a single
-- event), and the next expired batch is tried. NULL: none expired.
CREATE OR REPLACE FUNCTION tributary.take_over_expired(g tributary.consumer_groups, p_consumer text)
RETURNS tributary.consumer_batches
LANGUAGE plpgsql AS $$
DECLARE
    v_batch tributary.consumer_batches;
BEGIN
    LOOP
        -- SKIP LOCKED: consumers racing for expired batches each get another one.
        SELECT * INTO v_batch FROM tributary.consumer_batches b
         WHERE b.group_id = g.id AND b.leased_until < now()
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
CREATE OR REPLACE FUNCTION tributary.deliver_due_retry(g tributary.consumer_groups, p_consumer text)
RETURNS tributary.consumer_batches
LANGUAGE plpgsql AS $$
DECLARE
    v_retry tributary.consumer_retries;
    v_batch tributary.consumer_batches;
BEGIN
    SELECT * INTO v_retry FROM tributary.consumer_retries r
     WHERE r.group_id = g.id AND r.next_attempt_at <= now()
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
    INSERT INTO tributary.consumer_batches (group_id, consumer, lease_token, leased_until, delivery, seqs, source_ids)
    VALUES (g.id, p_consumer, gen_random_uuid(), now() + g.lease, v_retry.deliveries + 1,
            ARRAY[v_retry.seq], ARRAY[v_retry.source_id])
    RETURNING * INTO v_batch;
    RETURN v_batch;
END $$;

-- Sources an ordered group may not hand out now: a batch in flight or a retry waiting.
CREATE OR REPLACE FUNCTION tributary.busy_sources(p_group_id int) RETURNS int[]
LANGUAGE sql STABLE AS $$
SELECT ARRAY(SELECT unnest(b.source_ids) FROM tributary.consumer_batches b WHERE b.group_id = p_group_id
             UNION
             SELECT r.source_id FROM tributary.consumer_retries r WHERE r.group_id = p_group_id) $$;

-- Step 3 of a read: fresh events after the cursor. The caller holds the group
-- row locked (FOR NO KEY UPDATE), so fresh reads of one group queue and never
-- hand out the same events twice. One statement, so one snapshot: the
-- watermark, the sources that match and the events all come from it. Only
-- events of transactions older than every transaction still running
-- (tx_id < the snapshot's xmin) are read; those cannot be joined by a late
-- commit below them, so the cursor never passes an event still to come.
CREATE OR REPLACE FUNCTION tributary.read_fresh(g tributary.consumer_groups, p_consumer text, p_max int)
RETURNS TABLE (batch_id bigint, lease_token uuid, delivery int, seq bigint, source text,
               event_id bigint, payload jsonb, loaded_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    -- Ordered groups stop before the first event of a busy source (a prefix,
    -- so the one cursor stays exact). Computed before the read: the set can
    -- only shrink meanwhile (new batches of a group come from its own fresh
    -- reads, which wait for our lock, or from events already busy), so it
    -- may hold back too much for one read, never too little.
    v_busy int[] := CASE WHEN g.ordered THEN tributary.busy_sources(g.id) ELSE '{}' END;
BEGIN
    RETURN QUERY
    WITH candidates AS MATERIALIZED (
        SELECT e.seq, e.tx_id, e.source_id, e.event_id, e.payload, e.loaded_at
          FROM tributary.events e
         WHERE (e.tx_id, e.seq) > (g.cursor_tx, g.cursor_seq)
           AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
           AND e.source_id = ANY ((SELECT tributary.matching_sources(g.pattern))::int[])
         ORDER BY e.tx_id, e.seq
         LIMIT p_max
    ), stop AS (
        SELECT c.tx_id, c.seq FROM candidates c WHERE c.source_id = ANY (v_busy)
         ORDER BY c.tx_id, c.seq LIMIT 1
    ), picked AS MATERIALIZED (
        SELECT c.* FROM candidates c
         WHERE NOT EXISTS (SELECT 1 FROM stop WHERE (stop.tx_id, stop.seq) <= (c.tx_id, c.seq))
    ), next_cursor AS (
        -- The last event handed out; or, when this read took everything up to
        -- the watermark, the watermark itself, so the events before it that
        -- this group does not want are not scanned again.
        SELECT pg_snapshot_xmin(pg_current_snapshot()) AS tx_id, 0::bigint AS seq
         WHERE (SELECT count(*) FROM candidates) < p_max
           AND (SELECT count(*) FROM picked) = (SELECT count(*) FROM candidates)
        UNION ALL
        SELECT p.tx_id, p.seq FROM picked p
        ORDER BY 1 DESC, 2 DESC LIMIT 1
    ), moved AS (
        UPDATE tributary.consumer_groups gr SET cursor_tx = n.tx_id, cursor_seq = n.seq
          FROM next_cursor n
         WHERE gr.id = g.id AND (n.tx_id, n.seq) > (gr.cursor_tx, gr.cursor_seq)
    ), batch AS (
        INSERT INTO tributary.consumer_batches (group_id, consumer, lease_token, leased_until, delivery, seqs, source_ids)
        SELECT g.id, p_consumer, gen_random_uuid(), now() + g.lease, 1,
               array_agg(p.seq ORDER BY p.tx_id, p.seq), array_agg(p.source_id ORDER BY p.tx_id, p.seq)
          FROM picked p
        HAVING count(*) > 0
        RETURNING id, lease_token, delivery
    )
    SELECT b.id, b.lease_token, b.delivery, p.seq, s.name, p.event_id, p.payload, p.loaded_at
      FROM picked p CROSS JOIN batch b JOIN tributary.sources s ON s.id = p.source_id
     ORDER BY p.tx_id, p.seq;
END $$;

-- A batch of up to p_max events for consumer p_consumer of group p_group,
-- leased for the group's lease: in order of preference an expired batch taken
-- over, one due retry, or fresh events. No rows: nothing to do now.
CREATE OR REPLACE FUNCTION tributary.consumer_read(p_group text, p_consumer text, p_max int DEFAULT 1000)
RETURNS TABLE (batch_id bigint, lease_token uuid, delivery int, seq bigint, source text,
               event_id bigint, payload jsonb, loaded_at timestamptz)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_group);
    v_batch tributary.consumer_batches;
BEGIN
    IF p_consumer IS NULL OR p_consumer = '' THEN
        RAISE EXCEPTION 'name the consumer (any text that identifies it, e.g. host:pid)' USING ERRCODE = '22023';
    END IF;
    IF p_max IS NULL OR p_max NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'invalid batch size %: use 1 to 100000', p_max USING ERRCODE = '22023';
    END IF;

    v_batch := tributary.take_over_expired(v_group, p_consumer);
    IF v_batch.id IS NULL THEN
        v_batch := tributary.deliver_due_retry(v_group, p_consumer);
    END IF;
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

-- Acking --------------------------------------------------------------------------

-- Closes the delivery p_lease_token of batch p_batch_id: the batch is done,
-- except the events in p_failed_seqs, which are retried alone (or
-- dead-lettered, see fail_events) with p_error. false: the lease was lost
-- (taken over, or the group was reset or deleted): nothing changed. An ack
-- after the lease expired still counts while no one has taken the batch over.
CREATE OR REPLACE FUNCTION tributary.consumer_ack(p_batch_id bigint, p_lease_token uuid,
                                                   p_failed_seqs bigint[] DEFAULT NULL, p_error text DEFAULT NULL)
RETURNS boolean
LANGUAGE plpgsql AS $$
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
CREATE OR REPLACE FUNCTION tributary.consumer_fail(p_batch_id bigint, p_lease_token uuid, p_error text)
RETURNS boolean
LANGUAGE plpgsql AS $$
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
-- false: the lease was lost.
CREATE OR REPLACE FUNCTION tributary.consumer_extend(p_batch_id bigint, p_lease_token uuid,
                                                      p_lease interval DEFAULT NULL) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    IF p_lease <= interval '0' THEN
        RAISE EXCEPTION 'invalid lease %: it must be positive, e.g. ''30 seconds''', p_lease USING ERRCODE = '22023';
    END IF;
    UPDATE tributary.consumer_batches b SET leased_until = now() + coalesce(p_lease, g.lease)
      FROM tributary.consumer_groups g
     WHERE b.id = p_batch_id AND b.lease_token = p_lease_token AND g.id = b.group_id;
    RETURN FOUND;
END $$;

-- Dead letters --------------------------------------------------------------------

-- Puts dead letters of the group (all, or the one with seq p_seq) back as
-- retries due now, with their delivery count at 0. Returns how many.
CREATE OR REPLACE FUNCTION tributary.dead_letter_replay(p_group text, p_seq bigint DEFAULT NULL) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_group);
    v_count int;
BEGIN
    WITH revived AS (
        DELETE FROM tributary.consumer_dead_letters d
         WHERE d.group_id = v_group.id AND (p_seq IS NULL OR d.seq = p_seq)
        RETURNING d.seq, d.last_error
    )
    INSERT INTO tributary.consumer_retries (group_id, seq, deliveries, next_attempt_at, last_error, source_id)
    SELECT v_group.id, r.seq, 0, now(), r.last_error, e.source_id
      FROM revived r JOIN tributary.events e ON e.seq = r.seq
    ON CONFLICT (group_id, seq) DO NOTHING;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;

CREATE OR REPLACE VIEW tributary.dead_letters AS
SELECT g.name AS group_name, d.seq, s.name AS source, e.event_id, e.payload, d.deliveries, d.last_error, d.failed_at
  FROM tributary.consumer_dead_letters d
  JOIN tributary.consumer_groups g ON g.id = d.group_id
  JOIN tributary.events e ON e.seq = d.seq
  JOIN tributary.sources s ON s.id = e.source_id;

-- Without a group -------------------------------------------------------------------

-- Up to p_max events after position (p_after_tx, p_after_seq) (NULL: the
-- beginning) from sources matching p_pattern, under the same watermark as
-- consumer_read. Stateless: the caller remembers the last (tx_id, seq).
CREATE OR REPLACE FUNCTION tributary.read_log(p_pattern text, p_after_tx xid8, p_after_seq bigint, p_max int DEFAULT 1000)
RETURNS TABLE (tx_id xid8, seq bigint, source text, event_id bigint, payload jsonb, loaded_at timestamptz)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    PERFORM tributary.check_pattern(p_pattern);
    IF p_max IS NULL OR p_max NOT BETWEEN 1 AND 100000 THEN
        RAISE EXCEPTION 'invalid batch size %: use 1 to 100000', p_max USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
    SELECT e.tx_id, e.seq, s.name, e.event_id, e.payload, e.loaded_at
      FROM (SELECT e.* FROM tributary.events e
             WHERE (e.tx_id, e.seq) > (coalesce(p_after_tx, '0'::xid8), coalesce(p_after_seq, 0))
               AND e.tx_id < pg_snapshot_xmin(pg_current_snapshot())
               AND e.source_id = ANY ((SELECT tributary.matching_sources(p_pattern))::int[])
             ORDER BY e.tx_id, e.seq
             LIMIT p_max) e
      JOIN tributary.sources s ON s.id = e.source_id
     ORDER BY e.tx_id, e.seq;
END $$;

-- Status ----------------------------------------------------------------------------

-- A group's backlog: events of its sources after its cursor, and the oldest
-- loaded_at among them. Counting scans the backlog: cheap while consumers keep
-- up. Without JIT, which costs more than the count on the large estimates
-- that a big backlog gives.
CREATE OR REPLACE FUNCTION tributary.group_backlog(g tributary.consumer_groups, OUT events bigint, OUT oldest timestamptz)
LANGUAGE sql STABLE SET jit = off AS $$
SELECT count(*), min(e.loaded_at)
  FROM tributary.events e
 WHERE (e.tx_id, e.seq) > (g.cursor_tx, g.cursor_seq)
   AND e.source_id = ANY ((SELECT tributary.matching_sources(g.pattern))::int[]) $$;

-- events_behind: events of the group's sources not yet handed out (after the
-- cursor). oldest_unprocessed_age: age (since loaded_at) of the oldest event
-- not yet acked: behind, in flight or waiting for a retry (dead letters
-- excluded); NULL when there is none.
CREATE OR REPLACE VIEW tributary.group_status AS
SELECT g.name, g.pattern, g.ordered, g.max_deliveries, g.lease,
       behind.events AS events_behind,
       now() - least(behind.oldest, flight.oldest, retry.oldest) AS oldest_unprocessed_age,
       flight.batches AS batches_in_flight,
       retry.events AS retries_waiting,
       dead.events AS dead_letters
  FROM tributary.consumer_groups g
 CROSS JOIN LATERAL tributary.group_backlog(g) behind
 CROSS JOIN LATERAL (
       SELECT count(*)::int AS batches,
              (SELECT min(e.loaded_at) FROM tributary.consumer_batches b2
                 JOIN tributary.events e ON e.seq = ANY (b2.seqs) WHERE b2.group_id = g.id) AS oldest
         FROM tributary.consumer_batches b WHERE b.group_id = g.id) flight
 CROSS JOIN LATERAL (
       SELECT count(*)::int AS events, min(e.loaded_at) AS oldest
         FROM tributary.consumer_retries r JOIN tributary.events e ON e.seq = r.seq
        WHERE r.group_id = g.id) retry
 CROSS JOIN LATERAL (
       SELECT count(*)::int AS events FROM tributary.consumer_dead_letters d WHERE d.group_id = g.id) dead
 ORDER BY g.name;
