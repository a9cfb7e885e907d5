#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fetch_result.h"
#include "json_kind.h"

namespace tributary {

/// What one pass of the JSON parser over a response body learns: whether the
/// body is JSON, its shape, and each event's id or why the event cannot be
/// stored. That is everything parse_batch() checks except the order of the
/// ids, which needs the cursor.
///
/// Built from the parser's SAX callbacks, never a document: a document of a
/// hostile 60 MB body of `[],[],...` took 1.5 GB and of `{},{},...` 2 GB.
/// This costs a few words per level of nesting, 8 bytes per event, and the
/// parser's own buffers, which nlohmann sizes to the longest string or
/// number and to the longest stretch of text without one (brackets, commas,
/// whitespace: it keeps them for its error messages). So at most about the
/// body's size again, however the body is made.
///
/// Where a parsed document keeps the last of duplicate keys, so does the
/// outline: the last top-level "events", and the last "id" and "payload" of
/// an event.
struct BatchOutline {
    struct Rejection {
        FetchResult::Status status;
        std::string why;
    };

    /// Set when the parser stopped before the end of the body: a syntax error
    /// (transient: the next response may be whole), or a number beyond the
    /// range of a double, which the parser cannot read (failing: the source
    /// will send it again). The rest of the outline then means nothing.
    std::optional<Rejection> unreadable;

    JsonKind top = JsonKind::null;  ///< the top-level value
    /// The last "events" member, when the top level is an object with one.
    std::optional<JsonKind> events;
    /// Why the first element of the events list that cannot be stored can't
    /// (see event_problem()).
    std::optional<std::string> event_problem;
    /// The id of each element of the events list, in order, while no element
    /// has a problem.
    std::vector<std::int64_t> ids;
    /// The last top-level "remaining" and "head_id" members, when they are
    /// integers within int64; anything else there is ignored.
    std::optional<std::int64_t> remaining;
    std::optional<std::int64_t> head_id;
};

/// Reads `body` once, start to end (a UTF-8 byte order mark at the start is
/// skipped). Never throws except bad_alloc. The parser keeps its own state
/// in a bit per level, and this pass a counter, so depth costs no stack; the
/// depth limit is still for the caller to check first.
BatchOutline outline_batch(std::string_view body);

}  // namespace tributary
