INSERT INTO tributary.schema_definitions (digest, roles) VALUES ($1, $2)
ON CONFLICT (only_row) DO UPDATE SET digest = excluded.digest, roles = excluded.roles, applied_at = now()
