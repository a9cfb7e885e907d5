-- Gives up the lease holder $1 holds with token $2 (nothing if it does not).
SELECT tributary.maintainer_release($1, $2)
