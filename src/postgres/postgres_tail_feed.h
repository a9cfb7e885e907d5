#pragma once

#include <memory>
#include <string>
#include <vector>

#include "console/tail_feed.h"
#include "postgres_log_reader.h"
#include "postgres_session.h"

namespace tributary::postgres {

/// The console's live tail over read_log (as `tributary tail`), on a session
/// of its own. Event ids are the log positions "<tx>:<seq>".
class PostgresTailFeed : public console::TailFeed {
public:
    explicit PostgresTailFeed(const std::string& database_url);

    std::string position(const std::string& from) override;
    std::string after_event(const std::string& last_event_id) override;
    std::vector<console::TailEvent> read(const std::string& pattern, const std::string& after, int max) override;

private:
    PostgresSession session_;
    PostgresLogReader reader_;
};

/// A PostgresTailFeed per stream.
class PostgresTailFeeds : public console::TailFeeds {
public:
    explicit PostgresTailFeeds(std::string database_url) : database_url_(std::move(database_url)) {}
    std::unique_ptr<console::TailFeed> open() override;

private:
    const std::string database_url_;
};

/// "<tx>:<seq>" as a LogPosition; std::invalid_argument when it is not one.
LogPosition parse_event_id(const std::string& id);

}  // namespace tributary::postgres
