#include "postgres_console_store.h"

#include <stdexcept>

namespace tributary::postgres {

namespace {

[[noreturn]] void not_built() { throw std::runtime_error("not built yet"); }

}  // namespace

PostgresConsoleStore::PostgresConsoleStore(std::string /*database_url*/, int /*max_sessions*/) {}

std::string PostgresConsoleStore::overview() { not_built(); }
std::string PostgresConsoleStore::sources(const console::SourceQuery&) { not_built(); }
std::string PostgresConsoleStore::source(const std::string&) { not_built(); }
std::string PostgresConsoleStore::groups() { not_built(); }
std::string PostgresConsoleStore::group(const std::string&, const console::DeadLetterQuery&) { not_built(); }
std::string PostgresConsoleStore::pause(const std::string&) { not_built(); }
std::string PostgresConsoleStore::resume(const std::string&) { not_built(); }
std::string PostgresConsoleStore::nudge(const std::string&) { not_built(); }
std::string PostgresConsoleStore::replay(const std::string&, std::optional<std::int64_t>) { not_built(); }
std::string PostgresConsoleStore::reset(const std::string&, const std::string&) { not_built(); }

}  // namespace tributary::postgres
