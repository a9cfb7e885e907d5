-- The herald: wake-ups without a NOTIFY in any event writer's transaction
-- (issue 27).
--
-- A transaction that calls NOTIFY holds a cluster-wide lock from just before
-- its commit until its commit record is flushed, so notifying commits go one
-- at a time. So publish, receiver_store and the loaders notify nobody; one
-- process at a time, the herald, holds the lease below (one row, migration
-- 0016; elected as the maintainer is) and every interval (10 ms by default)
-- calls herald_announce, which sends one `NOTIFY tributary_events` when
-- events became readable since its last call: what consumers LISTEN for.
-- River, Oban and PgQ wake their consumers the same way.
--
-- Readable means below the watermark: the xmin of a snapshot, below which
-- every transaction has ended (docs/design.md §7, the consumers' own rule).
-- So a hint never announces an event that a read right after it cannot see,
-- even while another open transaction holds the watermark back.
--
-- Internal (sql/internal/): called by `run`, `receive`, `maintain` and
-- `consume`, whichever holds the lease (src/maintenance/announce_step.h).
-- They run as their owner (SECURITY DEFINER; search_path pinned); the roles
-- of those commands may execute them (sql/privileges/20_roles.sql).
-- Re-applied as a whole by `migrate` whenever any file under sql/ changes:
-- everything here is CREATE OR REPLACE.

-- Takes or renews the herald's lease for p_lease: when it expired, or
-- p_holder holds it already. Returns the token (a new one for a new holder,
-- or for the same holder after its lease had expired), or NULL: another
-- holds it (sql/internal/79_leases.sql).
-- Called by: every herald candidate, every lease/3.
-- (PL/pgSQL, as the others here: a migration older than 0016 may apply these
-- definitions before herald_lease exists, and only SQL functions' bodies are
-- checked at creation.)
CREATE OR REPLACE FUNCTION tributary.herald_acquire(p_holder text, p_lease interval) RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    RETURN tributary.lease_take('tributary.herald_lease', 'herald_acquire', p_holder, p_lease);
END $$;

-- Gives the lease up (a herald that stops): the next may take it at once.
CREATE OR REPLACE FUNCTION tributary.herald_release(p_holder text, p_token bigint) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    PERFORM tributary.lease_give_up('tributary.herald_lease', p_holder, p_token);
END $$;

-- One beat of the herald holding the lease with p_token: returns the
-- watermark now, and, when an event became readable since p_since (the
-- watermark it returned last time; NULL: unknown, as after taking the lease
-- or a lost connection), sends `NOTIFY tributary_events, '<watermark>'`
-- (every event with tx_id below it is readable) and says so (announced).
-- watermark NULL, and no NOTIFY: the lease is not p_holder's with p_token,
-- unexpired (another took it).
--
-- Its cost does not grow with the write rate: the lease's one row, and at
-- most one probe of events_tx_seq for the first event between the two
-- watermarks (partitions outside the range are pruned). Its transaction is
-- the statement's own; it takes the NOTIFY lock only when it announces, at
-- most once per beat, and no writer waits for it.
-- Called by: the herald, every interval (10 ms by default).
CREATE OR REPLACE FUNCTION tributary.herald_announce(p_holder text, p_token bigint, p_since xid8,
                                                     OUT watermark xid8, OUT announced boolean)
LANGUAGE plpgsql
SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    announced := false;
    PERFORM FROM tributary.herald_lease l
      WHERE l.holder = p_holder AND l.token = p_token AND l.expires_at > clock_timestamp();
    IF NOT FOUND THEN
        RETURN;
    END IF;
    watermark := pg_snapshot_xmin(pg_current_snapshot());
    -- On Citus the events carry their workers' transaction ids, of which
    -- this node's watermark says nothing: no hint there yet, consumers poll
    -- (docs/citus.md, what does not work yet).
    IF tributary.log_is_distributed() THEN
        RETURN;
    END IF;
    -- Every transaction below p_since had ended at the last beat, so what it
    -- wrote was announced then (or before the lease was taken: p_since NULL).
    IF p_since IS NULL
       OR (watermark > p_since
           AND EXISTS (SELECT 1 FROM tributary.events e WHERE e.tx_id >= p_since AND e.tx_id < watermark)) THEN
        PERFORM pg_notify('tributary_events', watermark::text);    -- src/postgres/control_channel.h
        announced := true;
    END IF;
END $$;
