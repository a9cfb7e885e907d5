SELECT tributary.loader_gate_succeeded($1, $2, $3, $4, $5, $6, $7)
