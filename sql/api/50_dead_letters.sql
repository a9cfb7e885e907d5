-- Dead letters: the events that failed max_deliveries times, and putting
-- them back.
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

-- Puts dead letters of the group (all, or the one with seq p_seq) back as
-- retries due now, with their delivery count at 0. Returns how many.
-- Called by: admins; `tributary dlq replay`.
CREATE OR REPLACE FUNCTION tributary.dead_letter_replay(p_group text, p_seq bigint DEFAULT NULL) RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_group);
    v_count int;
BEGIN
    WITH revived AS (
        DELETE FROM tributary.consumer_dead_letters d
         WHERE d.group_id = v_group.id AND (p_seq IS NULL OR d.seq = p_seq)
        RETURNING d.seq, d.last_error, d.tx_from, d.tx_to
    )
    INSERT INTO tributary.consumer_retries (group_id, seq, deliveries, next_attempt_at, last_error, source_id,
                                            tx_from, tx_to)
    SELECT v_group.id, r.seq, 0, now(), r.last_error, e.source_id, r.tx_from, r.tx_to
      FROM revived r JOIN tributary.events e
        ON e.seq = r.seq AND e.tx_id BETWEEN tributary.tx_from(r.tx_from) AND tributary.tx_to(r.tx_to)
    ON CONFLICT (group_id, seq) DO NOTHING;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;

-- event_key and event_id as consumer_read's (event_key came later, so it
-- is the last column: a view can only grow at its end).
-- Called by: admins and consumers; `tributary dlq list`.
-- The view is this function's rows (p_group NULL: every group), for the
-- reason group_status_of gives. `tributary dlq list` asks for one group here.
CREATE OR REPLACE FUNCTION tributary.dead_letters_of(p_group text)
RETURNS TABLE (group_name text, seq bigint, source text, event_id bigint, payload jsonb, deliveries int,
               last_error text, failed_at timestamptz, event_key text)
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
#variable_conflict use_column
DECLARE
    v_dead record;
BEGIN
    -- On Citus letter by letter, each event looked up on every shard (a dead
    -- letter keeps its seq, not its source): a join of the coordinator's
    -- letters with the distributed log is refused there.
    IF tributary.lanes_by_shard() THEN
        FOR v_dead IN SELECT g.name, d.seq, d.deliveries, d.last_error, d.failed_at, d.tx_from, d.tx_to
                        FROM tributary.consumer_dead_letters d JOIN tributary.consumer_groups g ON g.id = d.group_id
                       WHERE p_group IS NULL OR g.name = p_group LOOP
            RETURN QUERY EXECUTE format(
                'SELECT %L::text, e.seq, s.name, e.event_id, e.payload, %s::int, %L::text, %L::timestamptz,'
                ' coalesce(e.event_key, e.event_id::text)'
                ' FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id'
                ' WHERE e.seq = %s AND e.tx_id BETWEEN %L AND %L',
                v_dead.name, v_dead.deliveries, v_dead.last_error, v_dead.failed_at, v_dead.seq,
                tributary.tx_from(v_dead.tx_from), tributary.tx_to(v_dead.tx_to));
        END LOOP;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT g.name AS group_name, d.seq, s.name AS source, e.event_id, e.payload, d.deliveries, d.last_error,
           d.failed_at,
           coalesce(e.event_key, e.event_id::text) AS event_key
      FROM tributary.consumer_dead_letters d
      JOIN tributary.consumer_groups g ON g.id = d.group_id
      JOIN tributary.events e
        ON e.seq = d.seq AND e.tx_id BETWEEN tributary.tx_from(d.tx_from) AND tributary.tx_to(d.tx_to)
      JOIN tributary.sources s ON s.id = e.source_id
     WHERE p_group IS NULL OR g.name = p_group;
END $$;

CREATE OR REPLACE VIEW tributary.dead_letters AS SELECT * FROM tributary.dead_letters_of(NULL);
