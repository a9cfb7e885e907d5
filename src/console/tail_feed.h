#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tributary::console {

/// One committed event for the live tail: its position as the stream's
/// event id ("<tx>:<seq>"; on Citus one per lane, separated by commas;
/// opaque to the console) and its JSON line
/// {"seq","source","event_id","event_key","loaded_at","payload"}.
struct TailEvent {
    std::string id;
    std::string json;
};

/// The live tail's port to the log: reads committed events without a
/// group, as `tributary tail` does. One per stream, used by one thread.
/// Throws DatabaseUnavailable (core/errors.h) when the database is gone and
/// std::invalid_argument for a bad pattern, `from` or event id.
class TailFeed {
public:
    virtual ~TailFeed() = default;
    /// The position (an event id) of "beginning", "end" or an ISO-8601 time.
    virtual std::string position(const std::string& from) = 0;
    /// The position just after the event `last_event_id` (a reconnecting
    /// client's Last-Event-ID).
    virtual std::string after_event(const std::string& last_event_id) = 0;
    /// Up to `max` committed events of sources matching `pattern` after the
    /// position `after`, oldest first.
    virtual std::vector<TailEvent> read(const std::string& pattern, const std::string& after, int max) = 0;
};

/// Opens a feed per stream (each on a database session of its own, so that
/// a stream waiting on the database never holds up another).
class TailFeeds {
public:
    virtual ~TailFeeds() = default;
    virtual std::unique_ptr<TailFeed> open() = 0;
};

}  // namespace tributary::console
