#pragma once

#include <string>
#include <vector>

namespace tributary::postgres {

/// A SQL file compiled into the binary (see cmake/EmbedSql.cmake).
struct SqlFile {
    int version;       ///< the file name's leading number
    std::string name;  ///< e.g. "0001_schema.sql", "api/40_consumer_read.sql"
    std::string sql;
    std::string checksum;  ///< SHA-256 of `sql`, hex
};

/// migrations/*.sql, in version order: tables and indexes, forward-only.
const std::vector<SqlFile>& embedded_migrations();

/// migrations/citus/*.sql, in version order: applied after those on a Citus
/// coordinator (postgres/citus_distribution.h).
const std::vector<SqlFile>& embedded_citus_migrations();

/// sql/{internal,api,privileges}/*.sql, in that order: functions, views and
/// grants as CREATE OR REPLACE, applied again by `migrate` after the
/// migrations whenever they differ from the database's.
const std::vector<SqlFile>& embedded_definitions();

/// SHA-256 of the sql/ files (names and texts), recorded by `migrate`, so
/// that a binary can tell whether the database holds its own definitions.
const char* embedded_definitions_digest();

}  // namespace tributary::postgres
