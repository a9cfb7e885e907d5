INSERT INTO tributary.cursors (source_id, last_event_id) VALUES ($1, $2)
