-- The maintainer's lease: one process at a time creates partitions, applies
-- retention and archives (issue 16; River's leader election and the seeds'
-- "leadership" are the model). The lease is one row (migrations/0013):
-- whoever holds it unexpired is the maintainer; anyone may take it once it
-- expired. Every change a maintainer makes to the log runs in a transaction
-- that first fences itself with maintainer_fence (a share lock on the lease
-- row, and the token it was given), so a maintainer that stalled past its
-- lease (SIGSTOP, a long pause) acts no more: its token is no longer the
-- row's, and a new holder's takeover waits for any fenced transaction
-- still open (the maintainer's sessions set idle_in_transaction_session_
-- timeout below the lease, so a stalled one's transaction cannot hold the
-- row for longer than that).
--
-- Internal (sql/internal/): called by `tributary maintain` and by `run`
-- (src/postgres/...). They run as their owner (SECURITY DEFINER; search_path
-- pinned); tributary_maintainer may execute them.
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Takes or renews the lease for p_lease: when it expired, or p_holder holds
-- it already. Returns the token (a new one for a new holder, or for the same
-- holder after its lease had expired), or NULL: another holds it
-- (sql/internal/79_leases.sql).
-- Called by: the maintainer, every pass.
CREATE OR REPLACE FUNCTION tributary.maintainer_acquire(p_holder text, p_lease interval) RETURNS bigint
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
SELECT tributary.lease_take('tributary.maintainer_lease', 'maintainer_acquire', p_holder, p_lease) $$;

-- Gives the lease up (a maintainer that stops): the next may take it at once.
CREATE OR REPLACE FUNCTION tributary.maintainer_release(p_holder text, p_token bigint) RETURNS void
LANGUAGE sql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
SELECT tributary.lease_give_up('tributary.maintainer_lease', p_holder, p_token) $$;

-- The first statement of every transaction in which a maintainer changes
-- the log: holds the lease row (FOR SHARE) until that transaction ends, so
-- no one can take the lease meanwhile, and raises SQLSTATE TR001 unless
-- p_holder holds it with p_token, unexpired.
CREATE OR REPLACE FUNCTION tributary.maintainer_fence(p_holder text, p_token bigint) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM FROM tributary.maintainer_lease l
      WHERE l.holder = p_holder AND l.token = p_token AND l.expires_at > clock_timestamp()
        FOR SHARE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'maintainer "%" no longer holds the lease (token %)', p_holder, p_token
            USING ERRCODE = 'TR001';
    END IF;
END $$;
