#pragma once

#include <string>

namespace tributary::postgres {

/// The database a connection string (URI or key=value, or "" for libpq's
/// PG* variables and defaults) points at, as "host:port/dbname": never the
/// user, the password or any other parameter, so it can be shown and
/// logged. Parts libpq cannot tell are left out; an unparsable string is
/// "(unknown)".
std::string shown_database(const std::string& conninfo);

}  // namespace tributary::postgres
