#include "citus_distribution.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "migrator.h"
#include "postgres/statements.h"

namespace tributary::postgres {

namespace sql = statements::migrator;

namespace {

struct Applied {
    int version;
    std::string checksum;
};

std::vector<Applied> applied_citus_migrations(pqxx::transaction_base& tx) {
    std::vector<Applied> applied;
    if (!tx.exec1(sql::has_citus_bookkeeping)[0].as<bool>()) return applied;
    for (const auto& row : tx.exec(sql::applied_citus_migrations))
        applied.push_back({row[0].as<int>(), row[2].as<std::string>()});
    return applied;
}

const Applied* find(const std::vector<Applied>& applied, int version) {
    const auto it =
        std::find_if(applied.begin(), applied.end(), [&](const Applied& a) { return a.version == version; });
    return it == applied.end() ? nullptr : &*it;
}

void refuse_changed(const std::vector<Applied>& applied, const std::vector<SqlFile>& migrations) {
    for (const auto& migration : migrations) {
        const auto* done = find(applied, migration.version);
        if (done && done->checksum != migration.checksum)
            throw MigrationChanged("migration " + migration.name +
                                   " as applied to this database differs from this tributary's: a migration never "
                                   "changes once applied. Use the tributary release that applied it");
    }
}

/// An installation made on the coordinator alone, before tributary
/// distributed its tables on Citus, and holding events: its events carry the
/// coordinator's transaction ids, which mean nothing next to a worker's, so
/// it is not converted in place (docs/citus.md says how to move it).
bool undistributable(pqxx::transaction_base& tx, const std::vector<Applied>& applied) {
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
                       [&](const SqlFile& migration) { return find(applied, migration.version) != nullptr; });
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
        if (find(applied, migration.version)) continue;
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
