#include "migrator.h"

#include <memory>
#include <set>

#include <pqxx/pqxx>
#include <spdlog/spdlog.h>

#include "advisory_keys.h"
#include "core/errors.h"
#include "session_settings.h"

namespace tributary::postgres {

namespace {

constexpr const char* kBookkeeping = R"sql(
CREATE SCHEMA IF NOT EXISTS tributary;
CREATE TABLE IF NOT EXISTS tributary.schema_migrations (
    version    int PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS tributary.schema_definitions (
    only_row   boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    digest     text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()))sql";

constexpr const char* kDefinitionsDigest = "SELECT digest FROM tributary.schema_definitions";

std::set<int> applied_versions(pqxx::transaction_base& tx) {
    std::set<int> versions;
    for (const auto& row : tx.exec("SELECT version FROM tributary.schema_migrations")) versions.insert(row[0].as<int>());
    return versions;
}

int latest(const std::vector<SqlFile>& migrations) { return migrations.empty() ? 0 : migrations.back().version; }

std::unique_ptr<pqxx::connection> connect(const std::string& conninfo) {
    try {
        return std::make_unique<pqxx::connection>(with_connection_defaults(conninfo));
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(std::string("cannot connect to PostgreSQL: ") + e.what());
    }
}

/// Re-applies every definition file when the recorded digest differs, in one
/// transaction, so a reader never sees half of a new set of functions.
void apply_definitions(pqxx::connection& connection, const std::vector<SqlFile>& definitions, const std::string& digest,
                       std::vector<std::string>& done) {
    pqxx::work tx(connection);
    const auto recorded = tx.exec(kDefinitionsDigest);
    if (!recorded.empty() && recorded[0][0].as<std::string>() == digest) return;
    for (const auto& definition : definitions) {
        tx.exec(definition.sql);
        done.push_back(definition.name);
    }
    tx.exec_params(
        "INSERT INTO tributary.schema_definitions (digest) VALUES ($1) "
        "ON CONFLICT (only_row) DO UPDATE SET digest = excluded.digest, applied_at = now()",
        digest);
    tx.commit();
    for (const auto& definition : definitions) spdlog::info("applied definitions {}", definition.name);
}

}  // namespace

Migrator::Migrator(std::string conninfo, const std::vector<SqlFile>& migrations,
                   const std::vector<SqlFile>& definitions, std::string definitions_digest)
    : conninfo_(std::move(conninfo)),
      migrations_(migrations),
      definitions_(definitions),
      definitions_digest_(std::move(definitions_digest)) {}

std::vector<std::string> Migrator::migrate() {
    auto connection = connect(conninfo_);
    pqxx::nontransaction session(*connection);
    // Held until this connection closes, also when an exception leaves here.
    session.exec_params("SELECT pg_advisory_lock($1, $2)", kAdvisoryNamespace, kMigrationLockKey);
    session.exec(kBookkeeping);
    const auto applied = applied_versions(session);
    if (!applied.empty() && *applied.rbegin() > latest(migrations_))
        throw std::runtime_error("the database schema is at version " + std::to_string(*applied.rbegin()) +
                                 ", newer than this tributary knows (" + std::to_string(latest(migrations_)) +
                                 "): upgrade tributary");
    session.commit();

    std::vector<std::string> done;
    for (const auto& migration : migrations_) {
        if (applied.count(migration.version)) continue;
        pqxx::work tx(*connection);
        tx.exec(migration.sql);
        tx.exec_params("INSERT INTO tributary.schema_migrations (version, name) VALUES ($1, $2)", migration.version,
                       migration.name);
        tx.commit();
        spdlog::info("applied migration {}", migration.name);
        done.push_back(migration.name);
    }
    apply_definitions(*connection, definitions_, definitions_digest_, done);
    return done;
}

void Migrator::require_current(Needs needs) {
    try {
        check_current(needs);
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(std::string("connection to PostgreSQL lost: ") + e.what());
    } catch (const pqxx::in_doubt_error& e) {
        throw DatabaseUnavailable(std::string("connection to PostgreSQL lost: ") + e.what());
    }
}

void Migrator::check_current(Needs needs) {
    auto connection = connect(conninfo_);
    pqxx::nontransaction tx(*connection);
    const auto current = tx.exec1("SELECT to_regclass('tributary.schema_migrations') IS NOT NULL")[0].as<bool>();
    const int version = current ? tx.exec1("SELECT coalesce(max(version), 0) FROM tributary.schema_migrations")[0].as<int>() : 0;
    if (version < latest(migrations_))
        throw std::runtime_error("the database schema is at version " + std::to_string(version) + ", this tributary needs " +
                                 std::to_string(latest(migrations_)) + ": run `tributary migrate` first");
    if (needs == Needs::tables) return;
    const bool has_definitions =
        tx.exec1("SELECT to_regclass('tributary.schema_definitions') IS NOT NULL")[0].as<bool>();
    const auto recorded = has_definitions ? tx.exec(kDefinitionsDigest) : pqxx::result();
    if (recorded.empty() || recorded[0][0].as<std::string>() != definitions_digest_)
        throw std::runtime_error(
            "the database's functions and views differ from this tributary's: run `tributary migrate` first");
}

}  // namespace tributary::postgres
