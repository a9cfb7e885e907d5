INSERT INTO tributary.events (source_id, event_id, payload) VALUES ($1, $2, $3::jsonb)
