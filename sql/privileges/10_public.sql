-- What PUBLIC may do in schema tributary: nothing. PostgreSQL lets PUBLIC
-- execute every new function; tributary's functions are for its roles
-- (20_roles.sql) and its owner (the role that runs `tributary migrate`).
--
-- Privileges (sql/privileges/): applied after every other definition, by
-- every `migrate` that applies definitions (their digest changed, a
-- tributary_* role appeared since, or a migration was applied), so a new
-- function gets its grants in the same transaction that creates it.

REVOKE ALL ON SCHEMA tributary FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA tributary FROM PUBLIC;
-- Also catches a function a migration created (PostgreSQL lets PUBLIC execute
-- it): `migrate` applies these files after every migration it applies. Not
-- ALTER DEFAULT PRIVILEGES: per schema it can only add to the global default
-- (PUBLIC's EXECUTE), and globally it would change the owner's defaults in
-- every other schema.
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM PUBLIC;
