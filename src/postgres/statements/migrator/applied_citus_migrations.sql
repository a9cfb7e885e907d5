SELECT version, name, checksum FROM tributary.citus_migrations ORDER BY version
