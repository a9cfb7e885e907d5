-- Source $1 (by name), locked for `source remove`: its id.
SELECT s.id FROM tributary.sources s WHERE s.name = $1 FOR UPDATE
