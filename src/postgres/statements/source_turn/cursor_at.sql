-- The source's cursor as committed now: after a refused append, tells a moved cursor from ids
-- another writer stored first.
SELECT last_event_id FROM tributary.cursors WHERE source_id = $1
