-- Per consumer group that holds retention back: the partitions it holds.
SELECT g.name, array_to_json(array_agg(r.name ORDER BY r.from_tx))::text
  FROM tributary.partition_retention() r, unnest(r.held_by) g(name)
 WHERE r.state = 'held' OR (r.held_by <> '{}' AND r.state IN ('archive', 'due'))
 GROUP BY g.name
 ORDER BY g.name
