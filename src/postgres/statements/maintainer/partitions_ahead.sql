-- Creates the partitions the coming spans need; one row per name created.
SELECT name FROM tributary.partitions_ahead() AS name
