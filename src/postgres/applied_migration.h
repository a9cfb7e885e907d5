#pragma once

#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "sql_file.h"

namespace tributary::postgres {

/// A migration as a database records it (tributary.schema_migrations, or
/// tributary.citus_migrations for migrations/citus/).
struct AppliedMigration {
    int version;
    std::string name;
    std::optional<std::string> checksum;  ///< none: applied by a binary that recorded none
};

/// The rows of `statement` (version, name, checksum), in version order.
std::vector<AppliedMigration> read_applied(pqxx::transaction_base& tx, const char* statement);

bool is_applied(const std::vector<AppliedMigration>& applied, int version);

/// This binary's migration `version`, or nullptr.
const SqlFile* embedded(const std::vector<SqlFile>& migrations, int version);

/// Throws MigrationChanged (migrator.h) for the first applied migration whose
/// recorded checksum is not the embedded one's. Migrations without a
/// checksum pass: `migrate` records theirs on first sight.
void refuse_changed(const std::vector<AppliedMigration>& applied, const std::vector<SqlFile>& migrations);

}  // namespace tributary::postgres
