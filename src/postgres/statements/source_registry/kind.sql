-- The kind of source $1 (by name): http, push or published; no row when there is none.
SELECT kind FROM tributary.sources WHERE name = $1
