SELECT tributary.group_create($1, $2, $3, $4, $5::interval, $6, $7)
