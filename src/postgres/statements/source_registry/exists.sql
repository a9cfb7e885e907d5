SELECT 1 FROM tributary.sources WHERE name = $1
