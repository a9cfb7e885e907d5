-- The cursor row too: a batch being stored holds it, and we must see its
-- count once it is done. Pushed and published sources have no cursor (NULL):
-- the trigger sources_keep_events looks for their events.
SELECT s.id, c.events_stored
  FROM tributary.sources s LEFT JOIN tributary.cursors c ON c.source_id = s.id
 WHERE s.name = $1
   FOR UPDATE OF s
