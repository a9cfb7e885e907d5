INSERT INTO tributary.cursor_rewinds (source_id, from_cursor, to_cursor) VALUES ($1, $2, $3)
