#pragma once

#include <stdexcept>
#include <string>

#include <pqxx/pqxx>

namespace tributary::postgres {

/// The SQL API refused an argument (SQLSTATE 22023: a bad pattern, a bad
/// `from`, a bad number): the user's input is wrong, not the system.
class InvalidRequest : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The server's message without libpq's decoration, the position in our
/// statement (LINE ...) and the PL/pgSQL context; a HINT or DETAIL follows
/// on an indented line; no trailing newline.
std::string server_message(const pqxx::sql_error& e);

/// SQLSTATE 42501 (insufficient_privilege). libpqxx 6.4 leaves sqlstate()
/// empty for some errors it raises as insufficient_privilege: then the
/// server's message says it.
bool is_permission_denied(const pqxx::sql_error& e);

/// Rethrows what the SQL API raised as the domain error it means:
/// InvalidRequest (22023), GroupNotFound (P0002), PermissionDenied (42501),
/// else std::runtime_error with the server's message.
[[noreturn]] void throw_api_error(const pqxx::sql_error& e);

}  // namespace tributary::postgres
