-- Retention (issue 16): which partitions of the log may leave, what holds
-- them back, and the one function that drops a partition. Policies live in
-- tributary.retention_policies (migrations/0013): `tributary retention set`.
--
-- Internal (sql/internal/): called by the maintainer's retention step
-- (src/maintenance/retention_step.cpp) and by `status`/`group list`. The
-- ones that read events or drop run as their owner (SECURITY DEFINER;
-- search_path pinned); tributary_maintainer and tributary_admin may execute
-- the ones they need (sql/privileges/20_roles.sql).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- The policy of a source: the most specific pattern that matches its name.
-- Most specific, not longest keep: a policy for 'audit.>' must be able to
-- keep less than the global '>' as well as more (with "longest keep wins"
-- no pattern could ever shorten the global policy, and a size cap on one
-- family of sources would be overridden by any time policy over all).
-- Specific means: no '>' before '>', fewer '*', more segments, then the
-- pattern's text (a fixed order, so two equally specific patterns always
-- give the same answer). NULL: no policy matches; the source is kept forever.
-- Called by: partition_retention.
CREATE OR REPLACE FUNCTION tributary.retention_policy_of(p_source_name text) RETURNS tributary.retention_policies
LANGUAGE sql STABLE AS $$
SELECT r.*
  FROM tributary.retention_policies r
 WHERE p_source_name ~ tributary.pattern_regex(r.pattern)
 ORDER BY (r.pattern LIKE '%>') ,
          length(r.pattern) - length(replace(r.pattern, '*', '')),
          cardinality(string_to_array(r.pattern, '.')) DESC,
          r.pattern
 LIMIT 1 $$;

-- The consumer groups that still need an event of a (sealed) partition:
-- a group whose sources have events in it after its cursor (a whole
-- partition past the cursor with one of its sources in it; for the
-- partition the cursor is in, a probe of the (tx_id, seq) index from the
-- cursor), or that holds a batch, a retry or a dead letter whose range of
-- transactions meets the partition's (a row from before migration 0013,
-- whose range is unknown, is taken to meet it). Names, sorted.
-- On Citus a group's events in the partition are looked for lane by lane,
-- after each lane's cursor (unread_in_partition_by_lane); a batch, retry
-- or dead letter is of one lane, its range in that lane's worker's ids,
-- which a partition's range is on that worker too: the same test holds.
-- Called by: partition_retention, retention_drop.
CREATE OR REPLACE FUNCTION tributary.retention_holders(p tributary.partitions) RETURNS text[]
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_group record;
    v_held text[] := '{}';
    v_bits bit varying;
    v_after boolean;
BEGIN
    -- A group of lanes by its lowest lane's cursor: a bound, never too little.
    FOR v_group IN SELECT lo.* FROM tributary.consumer_groups g CROSS JOIN LATERAL tributary.group_low_cursor(g) lo
                    ORDER BY g.name LOOP
        v_bits := CASE WHEN v_group.pattern <> '>'
                       THEN coalesce(v_group.source_bits, tributary.matching_source_bits(v_group.pattern)) END;
        v_after := false;
        IF tributary.lanes_by_shard() THEN
            -- Citus: lane by lane, each in its worker's ids (the lowest cursor would mix them).
            v_after := tributary.unread_in_partition_by_lane(v_group.id, v_group.cursor_tx, v_group.cursor_seq,
                                                             p, v_bits, 1) > 0;
        ELSIF v_group.cursor_tx < p.to_tx AND EXISTS (
               SELECT FROM unnest(coalesce(p.source_ids, '{}')) s(id)
                WHERE v_bits IS NULL OR (s.id < length(v_bits) AND get_bit(v_bits, s.id) = 1)) THEN
            IF v_group.cursor_tx < p.from_tx THEN
                v_after := true;
            ELSE
                EXECUTE format($q$
                    SELECT EXISTS (SELECT 1 FROM tributary.%I e
                                    WHERE (e.tx_id, e.seq) > ($1, $2) AND e.tx_id >= $1
                                      AND ($3::bit varying IS NULL
                                           OR (e.source_id < length($3) AND get_bit($3, e.source_id) = 1))) $q$,
                               p.name)
                    INTO v_after USING v_group.cursor_tx, v_group.cursor_seq, v_bits;
            END IF;
        END IF;
        IF v_after
           OR EXISTS (SELECT FROM tributary.consumer_batches b
                       WHERE b.group_id = v_group.id
                         AND tributary.tx_from(b.tx_from) < p.to_tx AND tributary.tx_to(b.tx_to) >= p.from_tx)
           OR EXISTS (SELECT FROM tributary.consumer_retries r
                       WHERE r.group_id = v_group.id
                         AND tributary.tx_from(r.tx_from) < p.to_tx AND tributary.tx_to(r.tx_to) >= p.from_tx)
           OR EXISTS (SELECT FROM tributary.consumer_dead_letters d
                       WHERE d.group_id = v_group.id
                         AND tributary.tx_from(d.tx_from) < p.to_tx AND tributary.tx_to(d.tx_to) >= p.from_tx) THEN
            v_held := v_held || v_group.name;
        END IF;
    END LOOP;
    RETURN v_held;
END $$;

-- Per partition of the log, oldest first, what retention makes of it:
--   state     open     not sealed yet (a transaction below its end may still store)
--             kept     a source in it has no policy (kept forever), or no policy exists
--             waiting  not yet past its policies (due_at says when, by time)
--             held     past, but held_by groups still need events in it
--             archive  past and free, waiting to be archived first
--             due      the maintainer drops it on its next pass
--   due_at    when time alone makes it past (the latest ended_at + keep of its
--             sources' policies); NULL when time never will (a policy by size only).
--   over_size some policy of its sources has a max_bytes the log exceeds,
--             counting from the newest partition down to this one.
--   drop_unconsumed  every source's policy says drop even when a group needs it.
--   archive   some source's policy asks for the archive.
-- An empty sealed partition (no source) is past as soon as any policy
-- exists: there is nothing in it to keep. The default partition never leaves.
-- Called by: the maintainer's retention step, `status`, `group list`, metrics.
CREATE OR REPLACE FUNCTION tributary.partition_retention()
RETURNS TABLE (name text, from_tx xid8, to_tx xid8, state text, ended_at timestamptz, sealed_at timestamptz,
               bytes bigint, due_at timestamptz, over_size boolean, held_by text[], drop_unconsumed boolean,
               archive boolean, archived_at timestamptz, archive_failures int, archive_error text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_part tributary.partitions;
    v_any_policy boolean := EXISTS (SELECT FROM tributary.retention_policies);
    v_newer_bytes numeric;
    v_policies tributary.retention_policies[];
    v_unpoliced boolean;
    v_past boolean;
BEGIN
    FOR v_part IN SELECT * FROM tributary.partitions p ORDER BY p.from_tx LOOP
        name := v_part.name; from_tx := v_part.from_tx; to_tx := v_part.to_tx;
        ended_at := v_part.ended_at; sealed_at := v_part.sealed_at; bytes := v_part.bytes;
        archived_at := v_part.archived_at; archive_failures := v_part.archive_failures;
        archive_error := v_part.archive_error;
        due_at := NULL; over_size := false; held_by := '{}'; drop_unconsumed := false; archive := false;
        IF v_part.sealed_at IS NULL THEN
            state := 'open';
            RETURN NEXT;
            CONTINUE;
        END IF;
        SELECT array_agg(tributary.retention_policy_of(s.name)), bool_or(tributary.retention_policy_of(s.name) IS NULL)
          INTO v_policies, v_unpoliced
          FROM tributary.sources s WHERE s.id = ANY (v_part.source_ids);
        -- A source deleted since: its events no longer belong to anyone.
        IF NOT v_any_policy OR coalesce(v_unpoliced, false) THEN
            state := 'kept';
            RETURN NEXT;
            CONTINUE;
        END IF;
        -- The log's size from the newest partition down to this one.
        SELECT sum(coalesce(q.bytes, tributary.partition_bytes(q.name)))
          INTO v_newer_bytes FROM tributary.partitions q WHERE q.from_tx >= v_part.from_tx;
        IF cardinality(v_policies) IS NULL THEN
            v_past := true;
        ELSE
            SELECT CASE WHEN bool_and(r.keep IS NOT NULL) THEN max(v_part.ended_at + r.keep) END,
                   coalesce(bool_or(r.max_bytes IS NOT NULL AND v_newer_bytes > r.max_bytes), false),
                   bool_and(r.drop_unconsumed), bool_or(r.archive),
                   bool_and((r.keep IS NOT NULL AND v_part.ended_at + r.keep < now())
                            OR (r.max_bytes IS NOT NULL AND v_newer_bytes > r.max_bytes))
              INTO due_at, over_size, drop_unconsumed, archive, v_past
              FROM unnest(v_policies) r;
        END IF;
        IF NOT v_past THEN
            state := 'waiting';
            RETURN NEXT;
            CONTINUE;
        END IF;
        held_by := tributary.retention_holders(v_part);
        state := CASE WHEN held_by <> '{}' AND NOT drop_unconsumed THEN 'held'
                      WHEN archive AND v_part.archived_at IS NULL THEN 'archive'
                      ELSE 'due' END;
        RETURN NEXT;
    END LOOP;
END $$;

-- The statement that streams a partition to the archive command: its rows
-- in the order consumers read them, as CSV (with a header) or COPY text.
-- It reads tributary.events over the partition's range, not the partition
-- by name: the maintainer's role may read the log (SELECT on events), but a
-- partition named directly checks its own privileges, which nobody is
-- granted; pruning makes the two the same scan.
-- Called by: the maintainer's retention step (it runs the statement on a
-- connection of its own and pipes the data to the command).
-- SECURITY DEFINER: it reads the catalogue, which the maintainer's role may
-- not read directly.
CREATE OR REPLACE FUNCTION tributary.archive_copy_statement(p_name text, p_format text) RETURNS text
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_part tributary.partitions;
BEGIN
    SELECT * INTO v_part FROM tributary.partitions p WHERE p.name = p_name;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'no partition named %', p_name USING ERRCODE = '22023';
    END IF;
    RETURN format('COPY (SELECT seq, source_id, event_id, event_key, tx_id, loaded_at, payload FROM tributary.events '
                  'WHERE tx_id >= %L::xid8 AND tx_id < %L::xid8 ORDER BY tx_id, seq) TO STDOUT %s',
                  v_part.from_tx, v_part.to_tx,
                  CASE p_format WHEN 'csv' THEN '(FORMAT csv, HEADER true)' WHEN 'text' THEN '(FORMAT text)'
                  ELSE tributary.raise_invalid('archive format must be csv or text') END);
END $$;

-- Raises 22023 with p_message (usable inside an expression).
CREATE OR REPLACE FUNCTION tributary.raise_invalid(p_message text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%', p_message USING ERRCODE = '22023';
END $$;

-- The archive command took the partition (exit status 0) / failed.
-- Fenced: only the maintainer holding the lease records it.
CREATE OR REPLACE FUNCTION tributary.retention_archived(p_holder text, p_token bigint, p_name text) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM tributary.maintainer_fence(p_holder, p_token);
    UPDATE tributary.partitions p SET archived_at = clock_timestamp(), archive_error = NULL WHERE p.name = p_name;
END $$;

CREATE OR REPLACE FUNCTION tributary.retention_archive_failed(p_holder text, p_token bigint, p_name text,
                                                              p_error text) RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_failures int;
BEGIN
    PERFORM tributary.maintainer_fence(p_holder, p_token);
    UPDATE tributary.partitions p
       SET archive_failures = p.archive_failures + 1, archive_error = left(p_error, 500),
           archive_failed_at = clock_timestamp()
     WHERE p.name = p_name
    RETURNING p.archive_failures INTO v_failures;
    RETURN v_failures;
END $$;

-- Drops one partition that retention says may leave (checked again here,
-- under the fence: a group reset or a new policy since the step looked
-- wins), with the keys of its text-keyed events: a key leaves with its
-- event, so the same key served again later is stored again (README: dropped
-- events are gone for good, and so is the memory of their keys).
--
-- In one transaction, in this order: the keys are deleted first, while the
-- log is not locked (a sealed partition takes no new event; a loader that
-- serves one of these keys meanwhile waits on the deleted key's row until
-- this commits, and then stores it again, or finds it if this rolls back);
-- then the ACCESS EXCLUSIVE lock on the log, waited for at most 3 s
-- (lock_timeout: readers and loaders queue behind a waiting exclusive lock,
-- so a long wait would stall them all; the step tries again on a later
-- pass), the DROP and the catalogue row. Not less than 3 s: the one usual
-- long holder is autovacuum on the sealed partition itself, which gives way
-- to a lock it blocks only after deadlock_timeout (1 s by default); with a
-- 1 s wait the drop gave up just as it would have had the lock, and stalled
-- everyone for that second again on each pass (bench/log: 51 times). The key delete reads the whole
-- partition: for a partition of many million text-keyed events that is a
-- long transaction (it holds no lock on the log meanwhile, only the keys).
--
-- On Citus the keys are deleted shard by shard on the workers (a join of
-- co-located shards), the unconsumed counted lane by lane, and the DROP
-- runs on every node, all in this transaction.
--
-- Returns NULL when the partition may not leave (any more), else the
-- counts and timings to log; raises 55P03 (lock_not_available) when the
-- lock was not had within 3 s, TR001 when the lease is lost.
CREATE OR REPLACE FUNCTION tributary.retention_drop(p_holder text, p_token bigint, p_name text,
    OUT events bigint, OUT keys bigint, OUT bytes bigint, OUT from_tx xid8, OUT to_tx xid8,
    OUT lock_wait_ms double precision, OUT lock_held_ms double precision, OUT unconsumed jsonb)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '3s' AS $$
DECLARE
    v_part tributary.partitions;
    v_status record;
    v_group record;
    v_count bigint;
    v_asked timestamptz;
    v_locked timestamptz;
BEGIN
    PERFORM tributary.maintainer_fence(p_holder, p_token);
    SELECT * INTO v_status FROM tributary.partition_retention() r WHERE r.name = p_name;
    IF v_status IS NULL OR v_status.state <> 'due' THEN
        RETURN;
    END IF;
    SELECT * INTO v_part FROM tributary.partitions p WHERE p.name = p_name FOR UPDATE;
    from_tx := v_part.from_tx; to_tx := v_part.to_tx; bytes := v_part.bytes;
    -- What the groups that still needed it lose (drop_unconsumed).
    unconsumed := '{}';
    FOR v_group IN SELECT lo.* FROM tributary.consumer_groups g CROSS JOIN LATERAL tributary.group_low_cursor(g) lo
                    WHERE g.name = ANY (v_status.held_by) LOOP
        IF tributary.lanes_by_shard() THEN
            v_count := tributary.unread_in_partition_by_lane(
                v_group.id, v_group.cursor_tx, v_group.cursor_seq, v_part,
                CASE WHEN v_group.pattern <> '>'
                     THEN coalesce(v_group.source_bits, tributary.matching_source_bits(v_group.pattern)) END,
                NULL);
            unconsumed := unconsumed || jsonb_build_object(v_group.name, v_count);
            CONTINUE;
        END IF;
        EXECUTE format($q$
            SELECT count(*) FROM tributary.%I e
             WHERE (e.tx_id, e.seq) > ($1, $2)
               AND ($3 = '>' OR e.source_id = ANY (tributary.matching_sources($3))) $q$, p_name)
            INTO v_count USING v_group.cursor_tx, v_group.cursor_seq, v_group.pattern;
        unconsumed := unconsumed || jsonb_build_object(v_group.name, v_count);
    END LOOP;
    IF tributary.log_is_distributed() THEN
        -- Citus: each shard's keys deleted on its worker (a join of co-located shards); the
        -- one-statement form below would bring every row through the coordinator.
        EXECUTE format('SELECT count(*) FROM tributary.%I e', p_name) INTO events;
        EXECUTE format('DELETE FROM tributary.event_keys k USING tributary.%I e'
                       ' WHERE e.event_key IS NOT NULL AND k.source_id = e.source_id AND k.event_key = e.event_key',
                       p_name);
        GET DIAGNOSTICS keys = ROW_COUNT;
    ELSE
        EXECUTE format($q$
            WITH gone AS (SELECT e.source_id, e.event_key FROM tributary.%I e),
                 dropped_keys AS (
                     DELETE FROM tributary.event_keys k USING gone
                      WHERE gone.event_key IS NOT NULL AND k.source_id = gone.source_id AND k.event_key = gone.event_key
                     RETURNING 1)
            SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM dropped_keys) $q$, p_name)
            INTO events, keys;
    END IF;
    v_asked := clock_timestamp();
    LOCK TABLE tributary.events IN ACCESS EXCLUSIVE MODE;
    v_locked := clock_timestamp();
    EXECUTE format('DROP TABLE tributary.%I', p_name);
    DELETE FROM tributary.partitions p WHERE p.name = p_name;
    lock_wait_ms := extract(epoch FROM v_locked - v_asked) * 1000;
    lock_held_ms := extract(epoch FROM clock_timestamp() - v_locked) * 1000;
END $$;
