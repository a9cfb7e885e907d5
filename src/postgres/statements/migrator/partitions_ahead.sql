SELECT tributary.partitions_ahead()
