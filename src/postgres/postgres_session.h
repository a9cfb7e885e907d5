#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <pqxx/pqxx>

#include "server_warnings.h"
#include "session_keeping.h"

namespace tributary::postgres {

/// One worker's own database session, (re)connected on demand. Statements
/// registered with `prepare` are prepared on every new connection.
///
/// `run` translates the ways a session dies (server gone, connection cut,
/// backend terminated, COMMIT outcome unknown) into DatabaseUnavailable and
/// drops the connection, so the next call starts a fresh session; a
/// permission refused (42501) into PermissionDenied. Session
/// state (advisory locks) dies with it: `generation` tells holders (see
/// PostgresSourceTurn).
///
/// A session made for SessionKeeping::shared (behind a pooler in transaction
/// mode, see session_keeping.h) leaves no state on the server session: it
/// sends no SET and prepares nothing, and `exec` sends each registered
/// statement's text instead of its name. Only what needs nothing of a
/// session beyond one transaction may use one.
class PostgresSession {
public:
    explicit PostgresSession(std::string conninfo, SessionKeeping keeping = SessionKeeping::kept);
    ~PostgresSession();
    PostgresSession(const PostgresSession&) = delete;
    PostgresSession& operator=(const PostgresSession&) = delete;

    void prepare(std::string name, std::string sql);

    /// Runs the statement registered as `name` with `prepare`: prepared, or
    /// as its text on a shared session.
    template <typename... Args>
    pqxx::result exec(pqxx::transaction_base& tx, const std::string& name, Args&&... args) {
        if (keeping_ == SessionKeeping::kept) return tx.exec_prepared(name, std::forward<Args>(args)...);
        return tx.exec_params(statement_text(name), std::forward<Args>(args)...);
    }

    template <typename Work>
    auto run(Work&& work) -> decltype(work(std::declval<pqxx::connection&>())) {
        try {
            return work(connection());
        } catch (const std::exception& e) {
            translate_failure(e);
            throw;
        }
    }

    /// Logs what the server says besides results (a RAISE WARNING of the
    /// SQL API: a Citus worker that does not answer) with `context` first,
    /// on this and every later connection (ServerWarnings).
    void log_server_warnings(std::string context);

    /// Called with the new generation each time a session is opened (but
    /// not after recycle()).
    void on_new_session(std::function<void(std::uint64_t)> callback) { on_new_session_ = std::move(callback); }

    /// Increments each time a new connection is opened.
    std::uint64_t generation() const noexcept { return generation_; }
    bool connected() const noexcept { return connection_ != nullptr; }
    /// Closes the connection (and so releases every session lock).
    void disconnect() noexcept;
    /// Closes the connection on purpose, to give back what it holds (libpq's
    /// buffers only grow); the next session it opens is no reconnect after
    /// a failure, so on_new_session is not told.
    void recycle() noexcept {
        disconnect();
        recycled_ = true;
    }

private:
    pqxx::connection& connection();
    const std::string& statement_text(const std::string& name) const;
    /// Throws DatabaseUnavailable (after dropping the connection) when `e`
    /// means the session is gone; returns otherwise.
    void translate_failure(const std::exception& e);

    std::string conninfo_;
    SessionKeeping keeping_;
    std::vector<std::pair<std::string, std::string>> statements_;
    std::unique_ptr<pqxx::connection> connection_;
    std::string warnings_context_;
    std::unique_ptr<ServerWarnings> warnings_;  ///< connection_'s, when warnings_context_ is set
    std::uint64_t generation_ = 0;
    bool recycled_ = false;
    std::function<void(std::uint64_t)> on_new_session_;
};

/// True for SQLSTATEs worth retrying a transaction on (serialization failure,
/// deadlock, lock not available).
bool is_retryable(const pqxx::sql_error& e);

/// Where the SQLSTATE says the schema is missing, a message telling the user
/// to run `tributary migrate`.
void throw_if_schema_missing(const pqxx::sql_error& e);

}  // namespace tributary::postgres
