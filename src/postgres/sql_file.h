#pragma once

#include <string>
#include <vector>

namespace tributary::postgres {

/// A SQL file compiled into the binary (see cmake/EmbedSql.cmake).
struct SqlFile {
    int version;       ///< the file name's leading number
    std::string name;  ///< the file name, e.g. "0001_schema.sql"
    std::string sql;
};

/// migrations/*.sql, in version order.
const std::vector<SqlFile>& embedded_migrations();

}  // namespace tributary::postgres
