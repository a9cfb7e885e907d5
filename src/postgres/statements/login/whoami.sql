-- The login role of this session, and whether it is a member of group role $1 (false when $1
-- does not exist).
SELECT session_user::text,
       EXISTS (SELECT FROM pg_roles r WHERE r.rolname = $1 AND pg_has_role(session_user, r.oid, 'MEMBER'))
