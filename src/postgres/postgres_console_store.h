#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "console/console_store.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// The console's port on PostgreSQL: each call is one statement of a tributary.console_*
/// function (sql/api/9x_console_*.sql), which builds the whole document, run as the console's
/// role (tributary_console). Thread-safe: the HTTP server calls it from several threads, each
/// call borrowing one of at most `max_sessions` sessions (waiting while all are busy); a session
/// whose connection broke reconnects on its next call.
class PostgresConsoleStore : public console::ConsoleStore {
public:
    explicit PostgresConsoleStore(std::string database_url, int max_sessions = 4);
    ~PostgresConsoleStore() override;

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

private:
    class Borrowed;

    /// The groups whose matches a page needs kept first (console_keep_group_matches: where a
    /// change to the sources cleared them): none, every group (group unset), or one.
    struct GroupMatches {
        bool keep = false;
        std::optional<std::string> group;
    };

    /// Runs one console statement with `args` on a borrowed session, after keeping `matches`;
    /// returns its one text.
    template <typename... Args>
    std::string document(const GroupMatches& matches, const char* statement, Args&&... args);

    std::string database_url_;
    std::mutex mutex_;
    std::condition_variable returned_;
    std::vector<std::unique_ptr<PostgresSession>> idle_;
    int open_ = 0;
    const int max_sessions_;
};

}  // namespace tributary::postgres
