-- The console's groups (issue 17; docs/console.md): GET /api/groups and
-- GET /api/groups/NAME, each one jsonb document.
--
-- Public API (sql/api/): the console's role (tributary_console) may execute the
-- console_* functions only. Errors a caller can fix carry SQLSTATE 22023
-- (bad argument: 400) or P0002 (no such source or group: 404).
-- The functions run as their owner (SECURITY DEFINER; search_path pinned
-- to pg_catalog, so every name of ours is written tributary.x): the console
-- reads no table itself, and never a header value or a URL's query.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- The lists' cap on a group's events_behind (GET /api/overview, /api/groups)
-- and a group's own page's (GET /api/groups/NAME): counted exactly up to the
-- cap, "at least" beyond it (events_behind_capped), so that a page reads
-- about the cap per group (group_backlog_capped) however far behind the
-- groups are. A group's page: 10 000, not more, because a group of a fifth
-- of the log reads five events per event counted (bench/console: 100 000
-- took 300 ms for such a group).
CREATE OR REPLACE FUNCTION tributary.console_list_cap() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 1000::bigint $$;
CREATE OR REPLACE FUNCTION tributary.console_group_cap() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 10000::bigint $$;

-- The row before the cap had no p_capped (issue 17, never released).
DROP FUNCTION IF EXISTS tributary.console_group_row(text, text, boolean, int, bigint, interval, int, int, int, int);

-- A group's row (GET /api/groups): a row of console_group_status and how
-- many partitions it holds back from retention.
CREATE OR REPLACE FUNCTION tributary.console_group_row(p_name text, p_pattern text, p_ordered boolean,
                                                       p_max_deliveries int, p_behind bigint, p_capped boolean,
                                                       p_oldest interval, p_in_flight int, p_retries int,
                                                       p_dead int, p_holds int)
RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
SELECT jsonb_build_object(
           'name', p_name, 'pattern', p_pattern, 'ordered', p_ordered, 'max_deliveries', p_max_deliveries,
           'events_behind', coalesce(p_behind, 0), 'events_behind_capped', coalesce(p_capped, false),
           'oldest_unprocessed_age', tributary.console_seconds(p_oldest),
           'batches_in_flight', coalesce(p_in_flight, 0), 'retries_waiting', coalesce(p_retries, 0),
           'dead_letters', coalesce(p_dead, 0), 'holds_partitions', coalesce(p_holds, 0)) $$;

-- Keeps the matches (consumer_groups.source_bits) of the groups (p_name, or
-- all: NULL) whose wildcard pattern has none, as a group's own read would
-- (lease_fresh): a change to the sources clears them in every group, and
-- until each group's next read every page matched its pattern against every
-- source's name again (about 4 ms a pattern at 10 000 sources, on each
-- request) -- for an idle group, forever. The console calls this before
-- reading the overview, the groups or a group, in a statement of its own
-- (its pages read one snapshot, which must see what this stored): the cost
-- is paid once per change to the sources, by one request. Safe as
-- lease_fresh is: the rows are locked first and matched in a later
-- statement, whose snapshot sees every change to the sources committed
-- before the lock; a change that commits after it waits for the lock (its
-- trigger updates every group row) and clears them again. A row locked by a
-- read is skipped (the read keeps its matches). Does nothing outside READ
-- COMMITTED (a later statement's snapshot would be no newer) or in a
-- read-only transaction. Returns how many groups it stored matches for.
-- Called by: the console, before GET /api/overview, /api/groups and
-- /api/groups/NAME.
CREATE OR REPLACE FUNCTION tributary.console_keep_group_matches(p_name text) RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_ids int[];
    v_pattern text;
    v_bits bit varying;
BEGIN
    IF current_setting('transaction_isolation') <> 'read committed'
       OR current_setting('transaction_read_only')::boolean THEN
        RETURN 0;
    END IF;
    -- A pattern without wildcards is one source, found by its name: nothing to keep.
    v_ids := ARRAY(SELECT cg.id FROM tributary.consumer_groups cg
                    WHERE (p_name IS NULL OR cg.name = p_name) AND cg.source_bits IS NULL
                      AND tributary.pattern_has_wildcard(cg.pattern) AND cg.pattern <> '>'
                    ORDER BY cg.id
                      FOR NO KEY UPDATE SKIP LOCKED);
    FOR v_pattern IN SELECT DISTINCT cg.pattern FROM tributary.consumer_groups cg WHERE cg.id = ANY (v_ids) LOOP
        v_bits := tributary.matching_source_bits(v_pattern);    -- once per pattern, after the lock
        UPDATE tributary.consumer_groups cg SET source_bits = v_bits WHERE cg.id = ANY (v_ids) AND cg.pattern = v_pattern;
    END LOOP;
    RETURN cardinality(v_ids);
END $$;

-- A group's lanes for its row (issue 28): "lanes" (1: a group as before),
-- "unheld_lanes" (lanes nobody holds: a warning), and for a group of lanes
-- "lane_rows" (console_lane_rows, each lane counted up to p_cap).
-- Called by: console_groups, console_group.
CREATE OR REPLACE FUNCTION tributary.console_lanes(p_name text, p_cap bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_group tributary.consumer_groups;
    v_rows jsonb;
BEGIN
    SELECT * INTO v_group FROM tributary.consumer_groups cg WHERE cg.name = p_name;
    v_rows := tributary.console_lane_rows(v_group, p_cap);
    RETURN jsonb_build_object('lanes', tributary.lanes_of(v_group), 'unheld_lanes', tributary.unheld_lanes(v_group))
           || CASE WHEN v_rows IS NOT NULL THEN jsonb_build_object('lane_rows', v_rows) ELSE '{}' END;
END $$;

-- {"groups": [row, ...]} by name. Each group's backlog is counted once, up
-- to console_list_cap() (console_group_status), and each lane's up to it
-- too; retention's view of the partitions once.
-- Called by: the console, GET /api/groups.
CREATE OR REPLACE FUNCTION tributary.console_groups() RETURNS jsonb
LANGUAGE sql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
WITH held AS MATERIALIZED (SELECT * FROM tributary.console_held_partitions())
SELECT jsonb_build_object('groups', coalesce(jsonb_agg(
           tributary.console_group_row(s.name, s.pattern, s.ordered, s.max_deliveries, s.events_behind,
                                       s.events_behind_capped,
                                       s.oldest_unprocessed_age, s.batches_in_flight, s.retries_waiting,
                                       s.dead_letters, h.partitions)
           || tributary.console_lanes(s.name, tributary.console_list_cap()) ORDER BY s.name), '[]'))
  FROM tributary.console_group_status(NULL, tributary.console_list_cap()) s LEFT JOIN held h ON h.group_name = s.name $$;

-- The group's row plus a page of its dead letters, oldest first:
-- "dead_letter_page": {"total", "offset", "limit", "items": [...]}.
-- p_limit 1..500, p_offset >= 0 (else 22023); no such group: P0002.
-- Called by: the console, GET /api/groups/NAME.
CREATE OR REPLACE FUNCTION tributary.console_group(p_name text, p_limit int, p_offset int) RETURNS jsonb
LANGUAGE plpgsql STABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET jit = off AS $$
DECLARE
    v_group tributary.consumer_groups := tributary.group_by_name(p_name);
    v_row jsonb;
    v_page jsonb;
BEGIN
    PERFORM tributary.console_check_page(p_limit, p_offset);
    SELECT tributary.console_group_row(s.name, s.pattern, s.ordered, s.max_deliveries, s.events_behind,
                                       s.events_behind_capped,
                                       s.oldest_unprocessed_age, s.batches_in_flight, s.retries_waiting,
                                       s.dead_letters, (SELECT h.partitions FROM tributary.console_held_partitions() h
                                                         WHERE h.group_name = s.name))
      INTO v_row
      FROM tributary.console_group_status(v_group.name, tributary.console_group_cap()) s;
    v_row := v_row || tributary.console_lanes(v_group.name, tributary.console_list_cap());
    WITH page AS (
        SELECT d.seq, d.deliveries, d.last_error, d.failed_at, d.tx_from, d.tx_to
          FROM tributary.consumer_dead_letters d
         WHERE d.group_id = v_group.id
         ORDER BY d.seq
         LIMIT p_limit OFFSET p_offset)
    SELECT jsonb_build_object(
               'total', (SELECT count(*) FROM tributary.consumer_dead_letters d WHERE d.group_id = v_group.id),
               'offset', p_offset, 'limit', p_limit,
               'items', coalesce(jsonb_agg(jsonb_build_object(
                            'seq', p.seq, 'source', s.name, 'event_id', e.event_id,
                            'event_key', e.event_key, 'deliveries', p.deliveries, 'error', p.last_error,
                            'failed_at', tributary.console_time(p.failed_at), 'payload', e.payload)
                          ORDER BY p.seq), '[]'))
      INTO v_page
      FROM page p
      LEFT JOIN tributary.events e
        ON e.seq = p.seq AND e.tx_id BETWEEN tributary.tx_from(p.tx_from) AND tributary.tx_to(p.tx_to)
      LEFT JOIN tributary.sources s ON s.id = e.source_id;
    RETURN v_row || jsonb_build_object('dead_letter_page', v_page);
END $$;
