SELECT tributary.loader_close_succeeded($1, $2, $3, $4, $5, $6, $7)
