-- Every session's settings. The tcp_* settings are the server's side of the
-- keepalives: when a loader's host vanishes, its backend (and the advisory
-- locks it holds) goes within about a minute, not the server default of two
-- hours.
SET statement_timeout = '60s';
SET lock_timeout = '5s';
SET idle_in_transaction_session_timeout = '60s';
SET tcp_keepalives_idle = 30;
SET tcp_keepalives_interval = 10;
SET tcp_keepalives_count = 3;
SET tcp_user_timeout = 30000
