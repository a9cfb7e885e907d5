SELECT EXISTS (SELECT FROM pg_roles WHERE rolname = $1)
