SELECT tributary.group_reset($1, $2)
