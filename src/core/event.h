#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tributary {

/// One immutable event of a source. `payload` is the event's JSON value as
/// text, already validated by the fetcher: the core never parses it, and the
/// store hands it to the database as it is.
struct Event {
    std::int64_t id = 0;
    std::string payload;
};

using EventBatch = std::vector<Event>;

}  // namespace tributary
