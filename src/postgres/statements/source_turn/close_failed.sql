SELECT tributary.loader_close_failed($1, $2, $3, $4, $5, $6)
