-- The cursor of source $1 (by name), read only (`source check`): last_event_id, and the position
-- and the records taken there of a source keyed by text (position NULL for one keyed by id).
SELECT c.last_event_id, c.position, c.taken
  FROM tributary.sources s JOIN tributary.cursors c ON c.source_id = s.id
 WHERE s.name = $1
