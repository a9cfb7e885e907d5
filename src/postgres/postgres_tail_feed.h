#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "console/tail_feed.h"
#include "postgres_log_reader.h"
#include "postgres_session.h"
#include "read_position.h"

namespace tributary::postgres {

/// The console's live tail over read_log (as `tributary tail`), on a session
/// of its own. Event ids are the log positions "<tx>:<seq>"; on Citus one
/// per lane, separated by commas (read_position.h), read with read_log_lanes.
class PostgresTailFeed : public console::TailFeed {
public:
    explicit PostgresTailFeed(const std::string& database_url);

    std::string position(const std::string& from) override;
    std::string after_event(const std::string& last_event_id) override;
    std::vector<console::TailEvent> read(const std::string& pattern, const std::string& after, int max) override;

private:
    std::vector<console::TailEvent> read_one_order(const std::string& pattern, const std::string& after, int max);
    std::vector<console::TailEvent> read_lanes(const std::string& pattern, const std::string& after, int max);

    PostgresSession session_;
    PostgresLogReader reader_;
    /// On Citus, the id this feed last handed out (or was asked after) and
    /// where the lanes are past it: a read also moves the lanes it read up
    /// to their watermarks, which no event's id says.
    std::string last_id_;
    std::optional<ReadPosition> moved_;
};

/// A PostgresTailFeed per stream.
class PostgresTailFeeds : public console::TailFeeds {
public:
    explicit PostgresTailFeeds(std::string database_url) : database_url_(std::move(database_url)) {}
    std::unique_ptr<console::TailFeed> open() override;

private:
    const std::string database_url_;
};

}  // namespace tributary::postgres
