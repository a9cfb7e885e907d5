DELETE FROM tributary.sources WHERE id = $1
