-- Takes or renews the herald's lease: holder $1, for $2 seconds. The token,
-- or NULL while another holds it.
SELECT tributary.herald_acquire($1, make_interval(secs => $2))
