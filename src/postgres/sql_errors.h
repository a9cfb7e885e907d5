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

/// The server's message without libpq's decoration and the PL/pgSQL
/// context; a HINT or DETAIL follows on an indented line.
std::string server_message(const pqxx::sql_error& e);

/// Rethrows what the SQL API raised as the domain error it means:
/// InvalidRequest (22023), GroupNotFound (P0002), else std::runtime_error
/// with the server's message.
[[noreturn]] void throw_api_error(const pqxx::sql_error& e);

}  // namespace tributary::postgres
