#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tributary {

/// One immutable event of a source. `payload` is the event's JSON value as
/// text, already validated by the fetcher: the core never parses it, and the
/// store hands it to the database as it is.
///
/// Its key is `id` for sources keyed by id (Source::keyed_by_id), else `key`:
/// a string key as decoded text, an integer key as its digits, a composite
/// key as the JSON array of its parts.
struct Event {
    Event() = default;
    Event(std::int64_t event_id, std::string text, std::string event_key = {})
        : id(event_id), payload(std::move(text)), key(std::move(event_key)) {}

    std::int64_t id = 0;
    std::string payload;
    std::string key;
};

using EventBatch = std::vector<Event>;

}  // namespace tributary
