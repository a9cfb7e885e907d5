-- Sessions that hold a source's lock without being a loader in a turn
-- (issue 12). Advisory locks need no privilege: any database user can take
-- pg_advisory_lock(0x74726962, source_id) and stall that source for as long
-- as its session lives, while its gate says it is fine. `status`, the
-- loader's log and its metrics read this view to say so.
--
-- A holder is a stranger when either
--   * its role cannot update tributary.gates: it could not have run
--     loader_claim, whatever it calls itself (application_name is anyone's
--     to set; privileges are not), or
--   * the source has no turn in progress (the slot is closed, or its lease
--     ran out) and the holder's session has not changed state for 10 s:
--     a loader holds the lock only while its slot is leased, apart from
--     moments inside loader_claim (taken before the gate is read) and a
--     claim's commit not yet visible to this statement's snapshot; 10 s is
--     more than the claim's lock_timeout (5 s). This also catches a
--     privileged session that is not a loader (a psql left open), and a
--     loader that stalled past its lease.
--
-- `since` is when the holder's session last changed state (it went idle
-- after taking the lock, or began its current statement): pg_stat_activity
-- shows it only to the holder's own role, superusers and pg_read_all_stats,
-- else it is NULL (pid, user and application are shown to everyone).
CREATE OR REPLACE VIEW tributary.foreign_locks AS
SELECT s.id AS source_id,
       s.name AS source,
       l.pid,
       a.usename::text AS holder_user,
       a.application_name AS application,
       a.state_change AS since,
       CASE WHEN NOT coalesce(has_table_privilege(a.usesysid, 'tributary.gates', 'UPDATE'), false)
            THEN 'its role cannot run a loader'
            ELSE 'no turn of a loader in progress' END AS reason
  FROM pg_locks l
  JOIN tributary.sources s ON l.objid = s.id::oid
  JOIN tributary.gates g ON g.source_id = s.id
  LEFT JOIN pg_stat_activity a ON a.pid = l.pid
 WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
   AND l.classid = 1953655138::oid  -- 0x74726962, "trib": src/postgres/advisory_keys.h
   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
   AND (NOT coalesce(has_table_privilege(a.usesysid, 'tributary.gates', 'UPDATE'), false)
        OR ((g.closed_lease = g.lease OR g.next_allowed_at <= now())
            AND coalesce(a.state_change < now() - interval '10 seconds', false)));
