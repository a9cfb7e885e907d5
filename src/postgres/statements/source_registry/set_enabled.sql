UPDATE tributary.sources SET enabled = $2 WHERE name = $1
