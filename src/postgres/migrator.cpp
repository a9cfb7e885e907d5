#include "migrator.h"

#include <memory>

#include <spdlog/spdlog.h>
#include <pqxx/pqxx>

#include "advisory_keys.h"
#include "applied_migration.h"
#include "citus_distribution.h"
#include "core/errors.h"
#include "postgres/statements.h"
#include "session_settings.h"
#include "sql_errors.h"

namespace tributary::postgres {

namespace sql = statements::migrator;

namespace {

/// present_roles when every group role exists.
constexpr const char* kAllRoles =
    "tributary_admin,tributary_console,tributary_consumer,tributary_loader,tributary_maintainer,tributary_publisher,"
    "tributary_receiver";

std::vector<AppliedMigration> applied_migrations(pqxx::transaction_base& tx) {
    return read_applied(tx, sql::applied_migrations);
}

int latest(const std::vector<SqlFile>& migrations) { return migrations.empty() ? 0 : migrations.back().version; }

int latest(const std::vector<AppliedMigration>& applied) { return applied.empty() ? 0 : applied.back().version; }

void refuse_newer(const std::vector<AppliedMigration>& applied, const std::vector<SqlFile>& migrations) {
    if (latest(applied) > latest(migrations))
        throw std::runtime_error("the database schema is at version " + std::to_string(latest(applied)) +
                                 ", newer than this tributary knows (" + std::to_string(latest(migrations)) +
                                 "): upgrade tributary");
}

std::unique_ptr<pqxx::connection> connect(const std::string& conninfo) {
    try {
        return std::make_unique<pqxx::connection>(with_connection_defaults(conninfo));
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(std::string("cannot connect to PostgreSQL: ") + e.what());
    }
}

/// Migrations applied by binaries that recorded no checksum: recorded now,
/// as this binary's. Earlier texts of 0001 and 0006 shipped; what they left
/// differently, migration 0007 and the sql/ definitions put right.
void record_first_sight(pqxx::transaction_base& tx, const std::vector<AppliedMigration>& applied,
                        const std::vector<SqlFile>& migrations) {
    for (const auto& migration : applied) {
        const auto* mine = embedded(migrations, migration.version);
        if (migration.checksum || !mine) continue;
        tx.exec_params(sql::record_checksum, migration.version, mine->checksum);
        spdlog::info("recorded the checksum of migration {} (applied by an older tributary)", migration.name);
    }
}

/// Creates the group roles that are missing, when this role may; says which
/// are still missing. Returns the ones that exist.
std::string ensure_roles(pqxx::transaction_base& session) {
    session.exec(sql::create_roles);
    const auto present = session.exec1(sql::present_roles)[0].as<std::string>();
    if (present != kAllRoles)
        spdlog::warn(
            "the roles tributary_loader, tributary_consumer, tributary_admin, tributary_receiver, "
            "tributary_publisher, tributary_maintainer and tributary_console do not all exist (present: "
            "'{}'), and this role may not create roles (no CREATEROLE): their privileges are skipped. "
            "Create them (CREATE ROLE tributary_loader NOLOGIN; ...) and run `tributary migrate` again",
            present);
    return present;
}

/// Re-applies every definition file, the privileges last, in `tx`, when the
/// recorded digest differs, the group roles changed since, or
/// `after_migrations` (a migration may have created a function PUBLIC may
/// execute, or replaced a view): the caller commits them together, so a
/// reader never sees half of a new set of functions or grants. Returns
/// whether it applied them.
bool apply_definitions(pqxx::work& tx, const std::vector<SqlFile>& definitions, const std::string& digest,
                       const std::string& roles, bool after_migrations, std::vector<std::string>& done) {
    const auto recorded = tx.exec(sql::definitions_digest);
    if (!after_migrations && !recorded.empty() && recorded[0][0].as<std::string>() == digest &&
        !recorded[0][1].is_null() && recorded[0][1].as<std::string>() == roles)
        return false;
    for (const auto& definition : definitions) {
        tx.exec(definition.sql);
        done.push_back(definition.name);
    }
    tx.exec_params(sql::record_definitions, digest, roles);
    return true;
}

/// The line that ends one of a migration's transactions: a migration that
/// must not hold its locks for all of its work (migrations/0013: the log
/// made partitioned while loaders go on) runs in steps, each its own
/// transaction, and each safe to run again.
constexpr const char* kStepEnd = "\n-- migrate: commit\n";
/// A step that begins with this line has the sql/ definitions applied (and
/// committed) first: for a migration whose last step must not meet a writer
/// running a function of the old set (migrations/0013).
constexpr const char* kDefinitionsFirst = "-- migrate: definitions\n";

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.compare(0, prefix.size(), prefix) == 0;
}

std::vector<std::string> steps_of(const std::string& migration) {
    std::vector<std::string> steps;
    std::string::size_type from = 0;
    for (auto end = migration.find(kStepEnd); end != std::string::npos; end = migration.find(kStepEnd, from)) {
        steps.push_back(migration.substr(from, end - from));
        from = end + std::string(kStepEnd).size();
    }
    steps.push_back(migration.substr(from));
    return steps;
}

/// The log's next partitions, so that a database nobody maintains yet (no
/// `maintain`, no `run`) has room for a while; the maintainer keeps them
/// coming. A lock it cannot get at once is left to the maintainer.
void ensure_partitions_ahead(pqxx::connection& connection) {
    try {
        pqxx::work tx(connection);
        for (const auto& row : tx.exec(sql::partitions_ahead))
            spdlog::info("created partition {} of the log", row[0].as<std::string>());
        tx.commit();
    } catch (const pqxx::sql_error& e) {
        spdlog::warn("could not create the log's next partitions now (the maintainer will): {}", server_message(e));
    }
}

/// True when migrate() would change nothing: every migration applied with
/// this binary's checksum, this binary's definitions, and every group role
/// present and granted. Reads only, so that a role with no right to change
/// the schema (a loader's `ExecStartPre=tributary migrate`) passes once the
/// owner has migrated; anything to do takes the locked path, which needs
/// the owner's rights.
bool on_citus(pqxx::connection& connection) {
    pqxx::read_transaction tx(connection);
    return CitusDistribution::present(tx);
}

bool is_current(pqxx::connection& connection, const std::vector<SqlFile>& migrations, const std::string& digest,
                const CitusDistribution* citus) {
    pqxx::read_transaction tx(connection);
    const auto bookkeeping = tx.exec1(sql::has_bookkeeping);
    if (!bookkeeping[0].as<bool>() || !bookkeeping[1].as<bool>()) return false;
    const auto applied = applied_migrations(tx);
    refuse_newer(applied, migrations);
    refuse_changed(applied, migrations);
    for (const auto& migration : migrations)
        if (!is_applied(applied, migration.version)) return false;
    for (const auto& migration : applied)
        if (!migration.checksum) return false;
    if (citus && !citus->is_current(tx)) return false;
    const auto recorded = tx.exec(sql::definitions_digest);
    const auto present = tx.exec1(sql::present_roles)[0].as<std::string>();
    return !recorded.empty() && recorded[0][0].as<std::string>() == digest && present == kAllRoles &&
           !recorded[0][1].is_null() && recorded[0][1].as<std::string>() == present;
}

}  // namespace

Migrator::Migrator(std::string conninfo, const std::vector<SqlFile>& migrations,
                   const std::vector<SqlFile>& definitions, std::string definitions_digest,
                   const std::vector<SqlFile>& citus_migrations)
    : conninfo_(std::move(conninfo)),
      migrations_(migrations),
      citus_migrations_(citus_migrations),
      definitions_(definitions),
      definitions_digest_(std::move(definitions_digest)) {}

std::vector<std::string> Migrator::migrate() {
    auto connection = connect(conninfo_);
    const CitusDistribution distribution(citus_migrations_);
    const bool citus = on_citus(*connection);
    if (citus) CitusDistribution::warn_if_left(*connection);
    if (is_current(*connection, migrations_, definitions_digest_, citus ? &distribution : nullptr)) return {};
    pqxx::nontransaction session(*connection);
    // Held until this connection closes, also when an exception leaves here.
    session.exec_params(sql::take_lock, kAdvisoryNamespace, kMigrationLockKey);
    session.exec(sql::bookkeeping);
    const auto applied = applied_migrations(session);
    refuse_newer(applied, migrations_);
    refuse_changed(applied, migrations_);
    record_first_sight(session, applied, migrations_);
    const auto roles = ensure_roles(session);
    session.commit();

    std::vector<const SqlFile*> pending;
    for (const auto& migration : migrations_)
        if (!is_applied(applied, migration.version)) pending.push_back(&migration);
    std::vector<std::string> done;
    std::vector<std::string> defined;
    for (const auto* migration : pending) {
        const auto steps = steps_of(migration->sql);
        for (std::size_t i = 0; i < steps.size(); ++i) {
            if (starts_with(steps[i], kDefinitionsFirst)) {
                pqxx::work definitions(*connection);
                std::vector<std::string> early;
                apply_definitions(definitions, definitions_, definitions_digest_, roles, true, early);
                definitions.commit();
                spdlog::info("applied the definitions before the last step of migration {}", migration->name);
            }
            if (i + 1 == steps.size()) break;
            pqxx::work step(*connection);
            step.exec(steps[i]);
            step.commit();
        }
        pqxx::work tx(*connection);
        tx.exec(steps.back());
        tx.exec_params(sql::record_migration, migration->version, migration->name, migration->checksum);
        // The last migration's last step commits with the definitions: no
        // function of the old set ever runs on the new tables.
        const bool applied_definitions = migration == pending.back() &&
                                         apply_definitions(tx, definitions_, definitions_digest_, roles, true, defined);
        tx.commit();
        // `migrate` prints what it applied; the log says it only at debug, so that it is said once.
        spdlog::debug("applied migration {}", migration->name);
        done.push_back(migration->name);
        if (applied_definitions)
            for (const auto& name : defined) spdlog::debug("applied definitions {}", name);
    }
    if (pending.empty()) {
        pqxx::work tx(*connection);
        if (apply_definitions(tx, definitions_, definitions_digest_, roles, false, defined)) {
            tx.commit();
            for (const auto& name : defined) spdlog::debug("applied definitions {}", name);
        }
    }
    done.insert(done.end(), defined.begin(), defined.end());
    if (citus) {
        const auto distributed = distribution.apply(*connection);
        done.insert(done.end(), distributed.begin(), distributed.end());
        // Its views were dropped, and the Citus-only definitions (sql/citus)
        // apply to a distributed log only: all of them again.
        if (!distributed.empty()) {
            pqxx::work tx(*connection);
            std::vector<std::string> again;
            apply_definitions(tx, definitions_, definitions_digest_, roles, true, again);
            tx.commit();
        }
    }
    ensure_partitions_ahead(*connection);
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

void Migrator::require_herald_functions() {
    try {
        auto connection = connect(conninfo_);
        pqxx::nontransaction tx(*connection);
        const auto missing = tx.exec(sql::missing_herald_functions);
        if (!missing.empty())
            throw std::runtime_error("the database lacks the herald's function " + missing[0][0].as<std::string>() +
                                     ": run `tributary migrate` first (or start this command with --no-herald)");
    } catch (const pqxx::broken_connection& e) {
        throw DatabaseUnavailable(std::string("connection to PostgreSQL lost: ") + e.what());
    }
}

void Migrator::check_current(Needs needs) {
    auto connection = connect(conninfo_);
    pqxx::nontransaction tx(*connection);
    const auto bookkeeping = tx.exec1(sql::has_bookkeeping);
    const auto applied = bookkeeping[0].as<bool>() ? applied_migrations(tx) : std::vector<AppliedMigration>();
    refuse_changed(applied, migrations_);
    if (latest(applied) < latest(migrations_))
        throw std::runtime_error("the database schema is at version " + std::to_string(latest(applied)) +
                                 ", this tributary needs " + std::to_string(latest(migrations_)) +
                                 ": run `tributary migrate` first");
    if (needs == Needs::tables) return;
    if (needs == Needs::tables_and_loader_functions) {
        const auto missing = tx.exec(sql::missing_loader_functions);
        if (!missing.empty())
            throw std::runtime_error("the database lacks the loader's function " + missing[0][0].as<std::string>() +
                                     ": run `tributary migrate` first");
        return;
    }
    const auto recorded = bookkeeping[1].as<bool>() ? tx.exec(sql::definitions_digest) : pqxx::result();
    if (recorded.empty() || recorded[0][0].as<std::string>() != definitions_digest_)
        throw std::runtime_error(
            "the database's functions and views differ from this tributary's: run `tributary migrate` first");
}

}  // namespace tributary::postgres
