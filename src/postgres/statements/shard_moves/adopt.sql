-- Records where a shard moved outside tributary is; NULL when it had not moved.
SELECT tributary.shard_adopt($1)
