#pragma once

#include <string>

namespace tributary::postgres {

/// Whether a database session keeps one server session from one transaction to the next.
/// PostgreSQL does, and so does a pooler in session mode; a pooler in transaction or statement
/// mode (PgBouncer's pool_mode=transaction) does not: it hands the server session to another
/// client after each transaction. Then session state (advisory locks, LISTEN, prepared
/// statements, SET) is left behind on a server session that other clients use next.
enum class SessionKeeping {
    kept,   ///< a session is one server session until it closes
    shared  ///< server sessions change hands between transactions
};

/// What probe_session_keeping found.
struct SessionProbe {
    SessionKeeping keeping = SessionKeeping::kept;
    /// The server process libpq was told at login is not the one that answers: something in
    /// between (a pooler, in any mode) stands in for the server.
    bool through_proxy = false;
    /// The server processes seen, for the log ("4711, 4711" or "4711 then 4712").
    std::string evidence;
};

/// Opens two sessions at once and asks each in turn, three times, which server process serves
/// it: two open sessions served by one process, or one session served by two, mean server
/// sessions change hands. Sends nothing but SELECT pg_backend_pid(): no SET, no lock, no
/// prepared statement, so that it leaves nothing on a pooled server session. Throws
/// DatabaseUnavailable when it cannot connect or the sessions die.
///
/// A pooler that happened to serve both sessions from distinct server processes all along
/// would pass for `kept`; PgBouncer's orders (most recently used first, or round robin) each
/// show within the three rounds unless other clients take every server session in between.
SessionProbe probe_session_keeping(const std::string& conninfo);

}  // namespace tributary::postgres
