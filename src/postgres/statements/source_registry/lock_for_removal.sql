-- The cursor row too: a batch being stored holds it, and we must see its
-- count once it is done.
SELECT s.id, c.events_stored
  FROM tributary.sources s JOIN tributary.cursors c ON c.source_id = s.id
 WHERE s.name = $1
   FOR UPDATE OF s, c
