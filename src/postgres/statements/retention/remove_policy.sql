SELECT tributary.retention_remove($1)
