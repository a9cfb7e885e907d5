#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json_kind.h"
#include "strict_json_reader.h"

namespace tributary {

/// What one pass over a response body learns (see scan_batch): whether it is
/// JSON, its shape, the first reason its events cannot be stored, and where
/// the events to keep are. parse_batch() turns it into a FetchResult.
struct ScannedBatch {
    /// One kept event: its id and where its payload's text lies in the body.
    struct Kept {
        std::int64_t id = 0;
        std::size_t begin = 0;  ///< the payload is the bytes [begin, end) of the body
        std::size_t end = 0;
    };

    /// The body is no JSON value, or nests deeper than allowed; nothing
    /// below means anything then.
    std::optional<JsonSyntaxError> syntax;
    JsonKind top = JsonKind::null;  ///< the top-level value
    /// The envelope's "events" member, when the top level is an object with one.
    std::optional<JsonKind> records;
    /// A member the loader reads appears twice in the envelope.
    std::optional<std::string> envelope_problem;
    /// Why the first event that cannot be stored can't.
    std::optional<std::string> event_problem;
    /// The first id out of order or not above the cursor.
    std::optional<std::string> order_problem;
    /// The first `keep` events, while no event has a problem.
    std::vector<Kept> kept;
    std::size_t count = 0;  ///< elements of the list of events
    /// The envelope's "remaining" and "head_id", when they are integers
    /// within int64; anything else there is ignored.
    std::optional<std::int64_t> remaining;
    std::optional<std::int64_t> head_id;
};

/// Reads `body` once, start to end, with read_strict_json(): validates it,
/// finds the events (the top-level array, or the "events" member of the
/// top-level object), each event's id and the exact bytes of its payload,
/// refuses a repeated name among the members the loader reads (in the
/// envelope and in each event) and U+0000 in a payload, and checks the ids
/// against `after_id` and each other. Memory beyond the body: a few bytes per
/// level of nesting and 24 bytes per kept event, whatever the body holds.
ScannedBatch scan_batch(std::string_view body, std::int64_t after_id, std::size_t keep, int max_depth);

}  // namespace tributary
