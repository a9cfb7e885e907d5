#pragma once

#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "sql_file.h"

namespace tributary::postgres {

/// `migrate`'s part on a Citus coordinator (docs/citus.md): the migrations of
/// migrations/citus/, which spread the log over the workers, applied after
/// every migration of migrations/ and recorded in tributary.citus_migrations
/// with their checksums, as schema_migrations records the others.
class CitusDistribution {
public:
    explicit CitusDistribution(const std::vector<SqlFile>& migrations = embedded_citus_migrations());

    /// Whether the database has the Citus extension.
    static bool present(pqxx::transaction_base& tx);

    /// Whether every Citus migration is applied with this binary's text, or
    /// none can be (a log that was not empty when first seen on Citus).
    /// Reads only.
    bool is_current(pqxx::transaction_base& tx) const;

    /// Warns when tributary's tables are on the coordinator alone and stay
    /// there: an installation whose log held events before it met Citus.
    static void warn_if_left(pqxx::connection& connection);

    /// Applies the pending Citus migrations, each in its own transaction;
    /// the caller holds migrate's lock. The first one needs an empty log:
    /// an installation with events made on the coordinator alone is left as
    /// it is (warn_if_left). Returns the names applied. Throws
    /// MigrationChanged for an applied one whose text differs.
    std::vector<std::string> apply(pqxx::connection& connection) const;

private:
    const std::vector<SqlFile>& migrations_;
};

}  // namespace tributary::postgres
