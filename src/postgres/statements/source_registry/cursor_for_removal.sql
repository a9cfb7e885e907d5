-- The count of events stored by source $1 (by id), its cursor row locked: a batch being stored
-- holds it, and we must see its count once it is done. No row for a pushed or published source
-- (no cursor): check_removal.sql looks for its events. A statement of its own, by id: on Citus a
-- distributed table's rows are locked only by their distribution column (docs/citus.md).
SELECT c.events_stored FROM tributary.cursors c WHERE c.source_id = $1 FOR UPDATE
