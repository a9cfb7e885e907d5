INSERT INTO tributary.schema_definitions (digest) VALUES ($1)
ON CONFLICT (only_row) DO UPDATE SET digest = excluded.digest, applied_at = now()
