-- The leases of the elected roles: the maintainer's (migration 0013,
-- sql/internal/81_maintainer.sql) and the herald's (migration 0016,
-- sql/internal/87_herald.sql). Each is one row of a table of the same shape
-- (holder, token, expires_at, acquired_at, renewed_at); whoever holds it
-- unexpired fills the role, anyone may take it once it expired, and the token
-- grows by one with every new holder, so that a holder that stalled past its
-- lease and lost it acts no more (every action names its token). Times are
-- the database's clock.
--
-- Internal (sql/internal/): called only by the roles' own functions, which
-- name their table; nobody else may execute these (sql/privileges/).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Takes or renews the lease of table p_lease for p_for: when it expired, or
-- p_holder holds it already. Returns the token (a new one for a new holder,
-- or for the same holder after its lease had expired), or NULL: another
-- holds it. p_function names the caller in the error about its arguments.
CREATE OR REPLACE FUNCTION tributary.lease_take(p_lease regclass, p_function text, p_holder text, p_for interval)
RETURNS bigint
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    v_token bigint;
BEGIN
    IF p_holder IS NULL OR p_holder = '' OR p_for IS NULL OR p_for <= interval '0' THEN
        RAISE EXCEPTION '%: name the holder and a positive lease', p_function USING ERRCODE = '22023';
    END IF;
    EXECUTE format($q$
        UPDATE %s l
           SET token = CASE WHEN l.holder = $1 AND l.expires_at > clock_timestamp() THEN l.token
                            ELSE l.token + 1 END,
               acquired_at = CASE WHEN l.holder = $1 AND l.expires_at > clock_timestamp() THEN l.acquired_at
                                  ELSE clock_timestamp() END,
               holder = $1, expires_at = clock_timestamp() + $2, renewed_at = clock_timestamp()
         WHERE l.expires_at <= clock_timestamp() OR l.holder = $1
        RETURNING l.token $q$, p_lease)
       INTO v_token USING p_holder, p_for;
    RETURN v_token;
END $$;

-- Gives the lease of table p_lease up, if p_holder holds it with p_token
-- (a role that stops): the next may take it at once.
CREATE OR REPLACE FUNCTION tributary.lease_give_up(p_lease regclass, p_holder text, p_token bigint) RETURNS void
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    EXECUTE format('UPDATE %s l SET expires_at = ''-infinity'' WHERE l.holder = $1 AND l.token = $2', p_lease)
      USING p_holder, p_token;
END $$;

-- The lease of table p_lease as `tributary log` shows it: its holder (NULL:
-- never held), token, and the seconds until it expires (negative: expired;
-- -Infinity: released, which sets expires_at to -infinity).
CREATE OR REPLACE FUNCTION tributary.lease_shown(p_lease regclass, OUT holder text, OUT token bigint,
                                                 OUT expires_in_seconds double precision)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    EXECUTE format($q$
        SELECT l.holder, l.token,
               CASE WHEN l.holder IS NULL THEN NULL
                    WHEN isfinite(l.expires_at) THEN extract(epoch FROM l.expires_at - clock_timestamp())
                    ELSE '-Infinity'::float8 END
          FROM %s l $q$, p_lease)
       INTO holder, token, expires_in_seconds;
END $$;
