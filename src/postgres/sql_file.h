#pragma once

#include <string>
#include <vector>

namespace tributary::postgres {

/// A SQL file compiled into the binary (see cmake/EmbedSql.cmake).
struct SqlFile {
    int version;       ///< the file name's leading number
    std::string name;  ///< the file name, e.g. "0001_schema.sql"
    std::string sql;
    std::string checksum;  ///< SHA-256 of `sql`, hex
};

/// migrations/*.sql, in version order: tables and indexes, forward-only.
const std::vector<SqlFile>& embedded_migrations();

/// sql/*.sql, in order: functions and views as CREATE OR REPLACE, applied
/// again by every `migrate` after the migrations.
const std::vector<SqlFile>& embedded_definitions();

/// SHA-256 of sql/*.sql, recorded by `migrate`, so that a binary can tell
/// whether the database holds its own definitions.
const char* embedded_definitions_digest();

}  // namespace tributary::postgres
