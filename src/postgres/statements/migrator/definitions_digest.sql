-- Through to_jsonb, so that it also reads a table from before the roles
-- column: NULL there.
SELECT d.digest, to_jsonb(d) ->> 'roles' FROM tributary.schema_definitions d
