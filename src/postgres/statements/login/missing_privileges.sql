-- The privileges group role $1 holds in schema tributary (sql/privileges/20_roles.sql) that the
-- session's role lacks, one per row, each object by name: the schema's, then tables' and views'
-- (SELECT on tributary.gates), columns', functions' (EXECUTE on tributary.loader_claim). None
-- when it holds them all, however (a member of $1, the owner, a superuser, grants of its own), and
-- none when $1 does not exist. Reads only the catalogs, which every role may.
WITH group_role AS (SELECT oid FROM pg_roles WHERE rolname = $1),
     schema AS (SELECT oid, nspacl FROM pg_namespace WHERE nspname = 'tributary'),
     needed AS (
         SELECT 1 AS kind, '' AS object, a.privilege_type || ' on schema tributary' AS privilege,
                has_schema_privilege(s.oid, a.privilege_type) AS held
           FROM schema s, aclexplode(s.nspacl) a
          WHERE a.grantee = (SELECT oid FROM group_role)
         UNION ALL
         SELECT 2, c.relname, a.privilege_type || ' on tributary.' || c.relname,
                has_table_privilege(c.oid, a.privilege_type)
           FROM pg_class c, aclexplode(c.relacl) a
          WHERE c.relnamespace = (SELECT oid FROM schema) AND a.grantee = (SELECT oid FROM group_role)
         UNION ALL
         SELECT 3, c.relname, a.privilege_type || ' (' || t.attname || ') on tributary.' || c.relname,
                has_column_privilege(c.oid, t.attnum, a.privilege_type)
           FROM pg_class c
           JOIN pg_attribute t ON t.attrelid = c.oid AND t.attacl IS NOT NULL, aclexplode(t.attacl) a
          WHERE c.relnamespace = (SELECT oid FROM schema) AND a.grantee = (SELECT oid FROM group_role)
         UNION ALL
         -- By name: an overloaded function (publish) is one entry.
         SELECT 4, p.proname, a.privilege_type || ' on tributary.' || p.proname,
                has_function_privilege(p.oid, a.privilege_type)
           FROM pg_proc p, aclexplode(p.proacl) a
          WHERE p.pronamespace = (SELECT oid FROM schema) AND a.grantee = (SELECT oid FROM group_role))
SELECT privilege FROM needed WHERE NOT held GROUP BY kind, object, privilege ORDER BY kind, object, privilege
