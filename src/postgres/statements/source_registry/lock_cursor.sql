-- The cursor of source $1 (by id), locked for `source rewind`: last_event_id, and the position of
-- a source keyed by text (NULL for one keyed by id). No row: the source has no cursor (pushed or
-- published). By id alone: on Citus a distributed table's rows are locked only by their
-- distribution column (docs/citus.md).
SELECT c.last_event_id, c.position FROM tributary.cursors c WHERE c.source_id = $1 FOR UPDATE
