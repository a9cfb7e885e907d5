#pragma once

#include <string>
#include <vector>

#include "sql_file.h"

namespace tributary::postgres {

/// Applies the embedded migrations in version order, each in its own
/// transaction, recording it in `tributary.schema_migrations`. Concurrent
/// runs queue on an advisory lock, so the second finds nothing to do.
class Migrator {
public:
    explicit Migrator(std::string conninfo, const std::vector<SqlFile>& migrations = embedded_migrations());

    /// Names of the migrations applied by this call (empty: already current).
    /// Throws when the database is newer than this binary.
    std::vector<std::string> migrate();

    /// Throws, telling the user to run `tributary migrate`, unless the
    /// database has every migration this binary knows.
    void require_current();

private:
    void check_current();

    std::string conninfo_;
    const std::vector<SqlFile>& migrations_;
};

}  // namespace tributary::postgres
