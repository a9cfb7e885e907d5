-- The id of source $1 (by name), if there is one.
SELECT id FROM tributary.sources WHERE name = $1
