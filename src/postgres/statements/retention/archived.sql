SELECT tributary.retention_archived($1, $2, $3)
