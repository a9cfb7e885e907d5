INSERT INTO tributary.gates (source_id) VALUES ($1)
