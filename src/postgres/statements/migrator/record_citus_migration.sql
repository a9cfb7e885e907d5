INSERT INTO tributary.citus_migrations (version, name, checksum) VALUES ($1, $2, $3)
