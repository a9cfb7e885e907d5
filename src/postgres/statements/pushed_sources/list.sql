-- The pushed sources, enabled or not, with how each is authenticated and keyed
-- (migration 0012; read with read_receiving_json).
SELECT id, name, enabled, receiving::text
  FROM tributary.sources
 WHERE kind = 'push'
 ORDER BY id
