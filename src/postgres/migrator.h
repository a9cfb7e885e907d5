#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "sql_file.h"

namespace tributary::postgres {

/// A migration applied to the database whose text differs from the one this
/// binary embeds: the schema may not be what this binary's code expects.
class MigrationChanged : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// Applies the embedded migrations in version order, each in its own
/// transaction, recording it with the SHA-256 of its text in
/// `tributary.schema_migrations`; creates the group roles tributary_loader,
/// tributary_consumer and tributary_admin when missing and allowed
/// (CREATEROLE; otherwise a warning); then, when the database's definitions
/// differ from the binary's or a group role appeared since, the sql/
/// definitions and privileges in one transaction.
/// On a Citus coordinator, the migrations of migrations/citus/ come after
/// those (CitusDistribution), and the definitions again after them.
/// Concurrent runs queue on an advisory lock, so the second finds nothing
/// to do.
///
/// A migration applied once never changes: one whose recorded checksum
/// differs from the embedded text is refused (MigrationChanged). Rows from
/// binaries that recorded no checksum get the embedded one on first sight
/// (migrate only); the shipped edits of 0001 are repaired by 0007.
class Migrator {
public:
    explicit Migrator(std::string conninfo, const std::vector<SqlFile>& migrations = embedded_migrations(),
                      const std::vector<SqlFile>& definitions = embedded_definitions(),
                      std::string definitions_digest = embedded_definitions_digest(),
                      const std::vector<SqlFile>& citus_migrations = embedded_citus_migrations());

    /// Names of the migrations and definition files applied by this call
    /// (empty: already current).
    /// Throws when the database is newer than this binary, and
    /// MigrationChanged when an applied migration differs from this binary's.
    std::vector<std::string> migrate();

    /// What a command needs of the database: the migrations; the migrations
    /// and the loader's own functions with the signatures it calls (`run`:
    /// its definitions' digest is not checked, so that a change to any
    /// definition never stops loaders); or exactly this binary's sql/
    /// definitions too.
    enum class Needs { tables, tables_and_loader_functions, tables_and_definitions };

    /// Throws, telling the user to run `tributary migrate`, unless the
    /// database has every migration (and, if needed, exactly the
    /// definitions) this binary knows; throws MigrationChanged when an
    /// applied migration's recorded checksum differs from this binary's.
    void require_current(Needs needs = Needs::tables_and_definitions);

    /// Throws, telling the user to run `tributary migrate` (or to take no
    /// part in the herald's election), unless the database has the herald's
    /// functions with the signatures this binary calls: `run` and `consume`
    /// check their definitions no further, and an older `migrate` made none
    /// of the newer ones (sql/internal/87_herald.sql).
    void require_herald_functions();

private:
    void check_current(Needs needs);

    std::string conninfo_;
    const std::vector<SqlFile>& migrations_;
    const std::vector<SqlFile>& citus_migrations_;
    const std::vector<SqlFile>& definitions_;
    std::string definitions_digest_;
};

}  // namespace tributary::postgres
