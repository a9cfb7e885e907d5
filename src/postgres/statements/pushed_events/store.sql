-- One group commit of the receiver: per request, how many of its events were
-- stored, or NULL when its source no longer takes pushes
-- (sql/internal/70_receiver_store.sql).
SELECT request, stored FROM tributary.receiver_store($1::int[], $2::int[], $3::text[], $4::jsonb)
