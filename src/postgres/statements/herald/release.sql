-- Gives up the herald's lease holder $1 holds with token $2 (nothing if it does not).
SELECT tributary.herald_release($1, $2)
