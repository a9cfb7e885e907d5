-- What is left in the default partition: events, and those of them at or
-- above the xmin horizon (not movable yet).
SELECT events, unsealed FROM tributary.default_partition_left()
