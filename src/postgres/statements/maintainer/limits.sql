-- Timeouts of one fenced transaction (LOCAL: they end with it). While it is
-- open nobody can take the lease over, so: no statement longer than $1, and
-- no idling (a stalled or SIGSTOPped maintainer) longer than $2 — the server
-- then ends the session and the lease row is free.
SELECT set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $2, true)
