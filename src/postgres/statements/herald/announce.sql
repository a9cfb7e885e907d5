-- One beat of herald $1 holding token $2, the watermark of its last beat $3
-- (NULL: unknown): the watermark now, and whether it announced; NULL
-- watermark: the lease is no longer its.
SELECT watermark, announced FROM tributary.herald_announce($1, $2, $3::xid8)
