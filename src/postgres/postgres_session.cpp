#include "postgres_session.h"

#include <spdlog/spdlog.h>

#include "core/errors.h"
#include "session_settings.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

/// SQLSTATEs after which the session is unusable or gone: connection
/// exceptions (08), operator intervention (57P01 admin shutdown from
/// pg_terminate_backend, 57P02 crash shutdown, 57P03 cannot connect now).
bool session_is_gone(const std::string& state) { return starts_with(state, "08") || starts_with(state, "57P"); }

}  // namespace

PostgresSession::PostgresSession(std::string conninfo, SessionKeeping keeping)
    : conninfo_(with_connection_defaults(conninfo)), keeping_(keeping) {}

PostgresSession::~PostgresSession() { disconnect(); }

void PostgresSession::prepare(std::string name, std::string sql) {
    if (connection_ && keeping_ == SessionKeeping::kept) connection_->prepare(name, sql);
    statements_.emplace_back(std::move(name), std::move(sql));
}

void PostgresSession::log_server_warnings(std::string context) {
    warnings_context_ = std::move(context);
    if (connection_) warnings_ = std::make_unique<ServerWarnings>(*connection_, warnings_context_);
}

void PostgresSession::disconnect() noexcept {
    warnings_.reset();  // before its connection
    if (!connection_) return;
    try {
        connection_->disconnect();
    } catch (...) {
        // Closing a dead socket can fail; the connection is gone either way.
    }
    connection_.reset();
}

pqxx::connection& PostgresSession::connection() {
    if (connection_ && connection_->is_open()) return *connection_;
    disconnect();
    try {
        auto fresh = std::make_unique<pqxx::connection>(conninfo_);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
        // A silent reconnect inside libpqxx would lose our advisory locks
        // behind our back; we reconnect ourselves and bump the generation.
        fresh->inhibit_reactivation(true);
#pragma GCC diagnostic pop
        if (keeping_ == SessionKeeping::kept) {
            // On a shared session, these would stay behind for the pooler's next client.
            pqxx::nontransaction setup(*fresh);
            setup.exec(session_setup_sql());
            setup.commit();
            for (const auto& [name, sql] : statements_) fresh->prepare(name, sql);
        }
        connection_ = std::move(fresh);
        if (!warnings_context_.empty()) warnings_ = std::make_unique<ServerWarnings>(*connection_, warnings_context_);
        ++generation_;
        if (on_new_session_ && !recycled_) on_new_session_(generation_);
        recycled_ = false;
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(std::string("cannot connect to PostgreSQL: ") + e.what());
    }
    return *connection_;
}

const std::string& PostgresSession::statement_text(const std::string& name) const {
    for (const auto& [registered, sql] : statements_)
        if (registered == name) return sql;
    throw std::logic_error("no statement registered as " + name);
}

void PostgresSession::translate_failure(const std::exception& e) {
    if (dynamic_cast<const DatabaseUnavailable*>(&e)) {
        disconnect();
        return;
    }
    if (dynamic_cast<const pqxx::in_doubt_error*>(&e)) {
        disconnect();
        throw DatabaseUnavailable(std::string("COMMIT outcome unknown, connection lost: ") + e.what());
    }
    if (dynamic_cast<const pqxx::broken_connection*>(&e)) {
        disconnect();
        throw DatabaseUnavailable(std::string("connection to PostgreSQL lost: ") + e.what());
    }
    if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
        if (session_is_gone(sql->sqlstate())) {
            disconnect();
            throw DatabaseUnavailable(std::string("PostgreSQL ended the session: ") + e.what());
        }
        throw_if_schema_missing(*sql);
        // No retry or reconnect grants a privilege: the command stops and says which role it needs.
        if (is_permission_denied(*sql)) throw PermissionDenied(server_message(*sql));
    }
    if (connection_ && !connection_->is_open()) {
        disconnect();
        throw DatabaseUnavailable(std::string("connection to PostgreSQL lost: ") + e.what());
    }
}

bool is_retryable(const pqxx::sql_error& e) {
    const auto& state = e.sqlstate();
    return state == "40001" || state == "40P01" || state == "55P03";
}

void throw_if_schema_missing(const pqxx::sql_error& e) {
    if (e.sqlstate() == "42P01" || e.sqlstate() == "3F000")
        throw std::runtime_error(
            "the tributary schema is missing or incomplete in this database: run `tributary migrate` first (" +
            std::string(e.what()) + ")");
}

}  // namespace tributary::postgres
