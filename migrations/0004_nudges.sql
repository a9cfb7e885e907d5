-- Nudges (POST /sources/NAME/nudge on `run --listen`): a source that says it
-- has new events is asked as soon as its gate allows, not after its idle
-- pause. A nudge that arrives while a request is in flight is remembered
-- here, so the request's end schedules the next one at the interval.
ALTER TABLE tributary.gates ADD COLUMN nudged_at timestamptz;

-- The lease a slot was closed under: a close (success, failure, release)
-- applies once per lease, so a loader that replays a close whose commit it
-- could not confirm (the connection died) changes nothing the second time.
ALTER TABLE tributary.gates ADD COLUMN closed_lease bigint NOT NULL DEFAULT 0;
