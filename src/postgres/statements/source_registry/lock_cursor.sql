-- The cursor of source $1 (by name), locked for `source rewind`: last_event_id, and the position of
-- a source keyed by text (NULL for one keyed by id).
SELECT s.id, c.last_event_id, c.position
  FROM tributary.sources s JOIN tributary.cursors c ON c.source_id = s.id
 WHERE s.name = $1
   FOR UPDATE OF c
