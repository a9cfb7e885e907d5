SELECT tributary.retention_archive_failed($1, $2, $3, $4)
