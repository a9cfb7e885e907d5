-- Retention policies (issue 16): how long the events of the sources a
-- pattern matches are kept, by time and/or by the log's size
-- (tributary.retention_policies, migrations/0013; what they mean for each
-- partition: sql/internal/82_retention.sql). `tributary retention set|remove`.
--
-- Public API (sql/api/): errors a caller can fix carry SQLSTATE 22023.
-- The functions run as their owner (SECURITY DEFINER; search_path pinned).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Creates or replaces the policy of p_pattern ('>': the global policy).
-- At least one of p_keep and p_max_bytes. Returns true when it was new.
-- Called by: `tributary retention set`.
CREATE OR REPLACE FUNCTION tributary.retention_set(p_pattern text, p_keep interval, p_max_bytes bigint,
                                                   p_drop_unconsumed boolean, p_archive boolean) RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_new boolean;
BEGIN
    PERFORM tributary.check_pattern(p_pattern);
    IF p_keep IS NULL AND p_max_bytes IS NULL THEN
        RAISE EXCEPTION 'a retention policy needs --keep or --max-size (or both)' USING ERRCODE = '22023';
    END IF;
    IF p_keep <= interval '0' OR p_max_bytes <= 0 THEN
        RAISE EXCEPTION '--keep and --max-size must be positive' USING ERRCODE = '22023';
    END IF;
    v_new := NOT EXISTS (SELECT FROM tributary.retention_policies r WHERE r.pattern = p_pattern);
    INSERT INTO tributary.retention_policies AS r (pattern, keep, max_bytes, drop_unconsumed, archive)
    VALUES (p_pattern, p_keep, p_max_bytes, p_drop_unconsumed, p_archive)
    ON CONFLICT (pattern) DO UPDATE
       SET keep = excluded.keep, max_bytes = excluded.max_bytes, drop_unconsumed = excluded.drop_unconsumed,
           archive = excluded.archive;
    RETURN v_new;
END $$;

-- Removes the policy of p_pattern; false when there was none.
-- Called by: `tributary retention remove`.
CREATE OR REPLACE FUNCTION tributary.retention_remove(p_pattern text) RETURNS boolean
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
WITH gone AS (DELETE FROM tributary.retention_policies r WHERE r.pattern = p_pattern RETURNING 1)
SELECT EXISTS (SELECT FROM gone) $$;
