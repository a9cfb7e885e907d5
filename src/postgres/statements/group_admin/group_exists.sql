SELECT 1 FROM tributary.consumer_groups WHERE name = $1
