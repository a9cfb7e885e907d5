#pragma once

#include <string>

namespace tributary::postgres {

/// Adds our connection defaults (connect_timeout, TCP keepalives,
/// application_name) to a libpq connection string or URI, unless the user
/// set them already: a dead server or a silent network partition must turn
/// into an error within seconds, not hang a worker.
std::string with_connection_defaults(const std::string& conninfo);

/// SET statements run on every new session: timeouts so that no statement,
/// lock wait or forgotten transaction can hold a worker (or a row) forever.
const char* session_setup_sql();

}  // namespace tributary::postgres
