-- The server process serving this session now (session_keeping.cpp: two sessions served by one
-- process, or one session by two, mean a pooler shares server sessions between transactions).
SELECT pg_backend_pid()
