-- The first statement of every transaction that changes the log on the
-- maintainer's behalf: raises TR001 unless holder $1 holds the lease with
-- token $2, and share-locks the lease row until the transaction ends.
SELECT tributary.maintainer_fence($1, $2)
