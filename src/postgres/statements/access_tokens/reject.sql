-- Source $1 answered 401 to token generation $2.
UPDATE tributary.access_tokens SET rejected = true WHERE source_id = $1 AND generation = $2
