#include "applied_migration.h"

#include <algorithm>

#include "migrator.h"

namespace tributary::postgres {

std::vector<AppliedMigration> read_applied(pqxx::transaction_base& tx, const char* statement) {
    std::vector<AppliedMigration> applied;
    for (const auto& row : tx.exec(statement))
        applied.push_back({row[0].as<int>(), row[1].as<std::string>(),
                           row[2].is_null() ? std::nullopt : std::optional<std::string>(row[2].as<std::string>())});
    return applied;
}

bool is_applied(const std::vector<AppliedMigration>& applied, int version) {
    return std::any_of(applied.begin(), applied.end(), [&](const AppliedMigration& a) { return a.version == version; });
}

const SqlFile* embedded(const std::vector<SqlFile>& migrations, int version) {
    for (const auto& migration : migrations)
        if (migration.version == version) return &migration;
    return nullptr;
}

void refuse_changed(const std::vector<AppliedMigration>& applied, const std::vector<SqlFile>& migrations) {
    for (const auto& migration : applied) {
        const auto* mine = embedded(migrations, migration.version);
        if (!mine || !migration.checksum || *migration.checksum == mine->checksum) continue;
        throw MigrationChanged("migration " + migration.name +
                               " as applied to this database differs from this tributary's " + mine->name +
                               " (SHA-256 recorded " + migration.checksum->substr(0, 12) + "..., this binary's " +
                               mine->checksum.substr(0, 12) +
                               "...): a migration never changes once applied, so this binary cannot know the "
                               "schema it left. Use the tributary release that applied it; see the docs on upgrades");
    }
}

}  // namespace tributary::postgres
