-- $3: the position of a source keyed by text ('' = the start), NULL for one keyed by id.
INSERT INTO tributary.cursors (source_id, last_event_id, position) VALUES ($1, $2, $3)
