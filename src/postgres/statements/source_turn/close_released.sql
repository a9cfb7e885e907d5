SELECT tributary.loader_close_released($1, $2, $3, $4)
