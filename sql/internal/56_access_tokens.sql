-- OAuth2 tokens shared by the loaders (migration 0009; src/postgres/postgres_access_tokens.cpp).
--
-- Internal (sql/internal/): the loader's own functions. Nothing else should
-- call them: only tributary_loader may execute them (sql/privileges/20_roles.sql).
-- They run with the caller's rights. Re-applied as a whole by `migrate`
-- whenever any file under sql/ changes: everything here is CREATE OR REPLACE.

-- Source p_source's refresher lease for p_lease_s seconds, when no other
-- lease runs and the token is still generation p_generation (what the
-- caller saw; 0: none) or is not usable (none, rejected, expired); the
-- source's id back when the lease is ours, no row otherwise. The clock is
-- read into variables first: Citus refuses a function in the WHERE of an
-- ON CONFLICT on its tables (access_tokens is a reference table there,
-- docs/citus.md).
-- Called by: src/postgres/statements/access_tokens/become_refresher.sql.
CREATE OR REPLACE FUNCTION tributary.access_token_claim(p_source int, p_generation bigint,
                                                         p_lease_s double precision) RETURNS SETOF int
LANGUAGE plpgsql AS $$
DECLARE
    v_now timestamptz := now();
    v_until timestamptz := now() + make_interval(secs => p_lease_s);
BEGIN
    RETURN QUERY
    INSERT INTO tributary.access_tokens AS t (source_id, refreshing_until)
    VALUES (p_source, v_until)
    ON CONFLICT (source_id) DO UPDATE SET refreshing_until = excluded.refreshing_until
        WHERE (t.refreshing_until IS NULL OR t.refreshing_until <= v_now)
          AND (t.generation = p_generation OR t.value IS NULL OR t.rejected OR t.expires_at <= v_now)
    RETURNING t.source_id;
END $$;
