SELECT tributary.loader_append($1, $2, $3::bigint[], $4::jsonb, $5, $6, $7, $8)
