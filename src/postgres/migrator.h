#pragma once

#include <string>
#include <vector>

#include "sql_file.h"

namespace tributary::postgres {

/// Applies the embedded migrations in version order, each in its own
/// transaction, recording it in `tributary.schema_migrations`; then, when the
/// database's definitions differ from the binary's, the sql/ definitions in
/// one transaction. Concurrent runs queue on an advisory lock, so the second
/// finds nothing to do.
class Migrator {
public:
    explicit Migrator(std::string conninfo, const std::vector<SqlFile>& migrations = embedded_migrations(),
                      const std::vector<SqlFile>& definitions = embedded_definitions(),
                      std::string definitions_digest = embedded_definitions_digest());

    /// Names of the migrations and definition files applied by this call
    /// (empty: already current).
    /// Throws when the database is newer than this binary.
    std::vector<std::string> migrate();

    /// What a command needs of the database: the migrations (the loader,
    /// whose SQL is in its adapters and in migration 0006's functions, kept
    /// in a migration so that `run` depends on the schema version alone and
    /// not on the consumer-group definitions), or the sql/ definitions too.
    enum class Needs { tables, tables_and_definitions };

    /// Throws, telling the user to run `tributary migrate`, unless the
    /// database has every migration (and, if needed, exactly the
    /// definitions) this binary knows.
    void require_current(Needs needs = Needs::tables_and_definitions);

private:
    void check_current(Needs needs);

    std::string conninfo_;
    const std::vector<SqlFile>& migrations_;
    const std::vector<SqlFile>& definitions_;
    std::string definitions_digest_;
};

}  // namespace tributary::postgres
