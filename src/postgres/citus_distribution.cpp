#include "citus_distribution.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "applied_migration.h"
#include "postgres/statements.h"

namespace tributary::postgres {

namespace sql = statements::migrator;

namespace {

std::vector<AppliedMigration> applied_citus_migrations(pqxx::transaction_base& tx) {
    if (!tx.exec1(sql::has_citus_bookkeeping)[0].as<bool>()) return {};
    return read_applied(tx, sql::applied_citus_migrations);
}

/// An installation made on the coordinator alone, before tributary
/// distributed its tables on Citus, and holding events: its events carry the
/// coordinator's transaction ids, which mean nothing next to a worker's, so
/// it is not converted in place (docs/citus.md says how to move it).
bool undistributable(pqxx::transaction_base& tx, const std::vector<AppliedMigration>& applied) {
    return applied.empty() && !tx.exec1(sql::log_is_empty)[0].as<bool>();
}

}  // namespace

CitusDistribution::CitusDistribution(const std::vector<SqlFile>& migrations) : migrations_(migrations) {}

void CitusDistribution::warn_if_left(pqxx::connection& connection) {
    pqxx::read_transaction tx(connection);
    if (!tx.exec1(sql::has_bookkeeping)[0].as<bool>()) return;  // nothing of tributary here yet
    if (!undistributable(tx, applied_citus_migrations(tx))) return;
    spdlog::warn(
        "this database has the Citus extension, but its log already holds events stored on the coordinator "
        "alone: tributary's tables are left there, not distributed over the workers. See docs/citus.md for "
        "moving an installation to Citus");
}

bool CitusDistribution::present(pqxx::transaction_base& tx) { return tx.exec1(sql::has_citus)[0].as<bool>(); }

bool CitusDistribution::is_current(pqxx::transaction_base& tx) const {
    const auto applied = applied_citus_migrations(tx);
    refuse_changed(applied, migrations_);
    if (undistributable(tx, applied)) return true;
    return std::all_of(migrations_.begin(), migrations_.end(),
                       [&](const SqlFile& migration) { return is_applied(applied, migration.version); });
}

std::vector<std::string> CitusDistribution::apply(pqxx::connection& connection) const {
    std::vector<std::string> done;
    {
        pqxx::work tx(connection);
        tx.exec(sql::citus_bookkeeping);
        tx.commit();
    }
    for (const auto& migration : migrations_) {
        pqxx::work tx(connection);
        const auto applied = applied_citus_migrations(tx);
        refuse_changed(applied, migrations_);
        if (is_applied(applied, migration.version)) continue;
        if (undistributable(tx, applied)) return done;  // warn_if_left said so
        tx.exec(migration.sql);
        tx.exec_params(sql::record_citus_migration, migration.version, migration.name, migration.checksum);
        tx.commit();
        spdlog::debug("applied migration {}", migration.name);
        done.push_back(migration.name);
    }
    if (!done.empty()) {
        pqxx::read_transaction tx(connection);
        spdlog::info("the log is distributed over {} Citus workers", tx.exec1(sql::citus_workers)[0].as<int>());
    }
    return done;
}

}  // namespace tributary::postgres
