#pragma once

#include <utility>

#include <pqxx/pqxx>

#include "postgres_session.h"
#include "sql_errors.h"

namespace tributary::postgres {

/// Runs `work` (given a pqxx::nontransaction) as one autocommit call of the
/// SQL API on `session`, and turns what the API raises into the domain
/// errors it means (throw_api_error).
template <typename Work>
auto api_call(PostgresSession& session, Work&& work) {
    try {
        return session.run([&](pqxx::connection& c) {
            pqxx::nontransaction tx(c);
            return work(tx);
        });
    } catch (const pqxx::sql_error& e) {
        throw_api_error(e);
    }
}

}  // namespace tributary::postgres
