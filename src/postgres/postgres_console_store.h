#pragma once

#include <string>

#include "console/console_store.h"

namespace tributary::postgres {

/// The console's store over PostgreSQL. A stub until the store helper's
/// adapter replaces it: every method throws std::runtime_error.
class PostgresConsoleStore : public console::ConsoleStore {
public:
    explicit PostgresConsoleStore(std::string database_url, int max_sessions = 4);

    std::string overview() override;
    std::string sources(const console::SourceQuery& query) override;
    std::string source(const std::string& name) override;
    std::string groups() override;
    std::string group(const std::string& name, const console::DeadLetterQuery& query) override;

    std::string pause(const std::string& source) override;
    std::string resume(const std::string& source) override;
    std::string nudge(const std::string& source) override;
    std::string replay(const std::string& group, std::optional<std::int64_t> seq) override;
    std::string reset(const std::string& group, const std::string& to) override;
};

}  // namespace tributary::postgres
