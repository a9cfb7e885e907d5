-- Whether a source name matches a group pattern.
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

-- Called by: users, to try a pattern before creating a group with it.
CREATE OR REPLACE FUNCTION tributary.pattern_matches(pattern text, name text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM tributary.check_pattern(pattern);
    RETURN name ~ tributary.pattern_regex(pattern);
END $$;
COMMENT ON FUNCTION tributary.pattern_matches(text, text) IS
    'Whether a source name matches a group pattern: ''*'' one dot-separated segment, ''>'' (last) the rest.';
