-- What PUBLIC may do in schema tributary: nothing. PostgreSQL lets PUBLIC
-- execute every new function; tributary's functions are for its roles
-- (20_roles.sql) and its owner (the role that runs `tributary migrate`).
--
-- Privileges (sql/privileges/): applied after every other definition, by
-- every `migrate` that applies definitions (their digest changed, or a
-- tributary_* role appeared since), so a new function gets its grants in
-- the same transaction that creates it.

REVOKE ALL ON SCHEMA tributary FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA tributary FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM PUBLIC;
-- Functions the owner creates later (a migration's trigger function) start
-- without PUBLIC's EXECUTE too.
ALTER DEFAULT PRIVILEGES IN SCHEMA tributary REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;
