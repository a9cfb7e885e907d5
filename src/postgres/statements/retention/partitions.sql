-- What retention makes of each partition, oldest first.
SELECT name, from_tx::text, to_tx::text, state, bytes, array_to_json(held_by)::text, drop_unconsumed, archive,
       archive_failures
  FROM tributary.partition_retention()
