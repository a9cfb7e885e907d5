#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json_kind.h"
#include "page_paths.h"
#include "strict_json_reader.h"

namespace tributary {

/// What one pass over a response body learns (see scan_page): whether it is
/// JSON, its shape, the first reason its records cannot be stored, where the
/// records to keep are, and the values the paging reads from the top of the
/// body. parse_page() turns it into a ParsedPage.
struct ScannedPage {
    /// One kept record: its id (keyed by id) and where its payload's text
    /// lies in the body.
    struct Kept {
        std::int64_t id = 0;
        std::size_t begin = 0;  ///< the payload is the bytes [begin, end) of the body
        std::size_t end = 0;
    };

    /// A value read from the top of the body (--next, --has-more,
    /// --end-of-stream): its kind, and for a scalar where its text lies.
    struct Found {
        JsonKind kind = JsonKind::null;
        std::size_t begin = 0;
        std::size_t end = 0;
        JsonString string;  ///< a string's token
    };

    /// The body is no JSON value, or nests deeper than allowed; nothing
    /// below means anything then.
    std::optional<JsonSyntaxError> syntax;
    JsonKind top = JsonKind::null;  ///< the top-level value
    /// The value at the records pointer (today's protocol: the "events"
    /// member), when there is one.
    std::optional<JsonKind> records;
    /// The body is the records (today's protocol's bare array, or --records "").
    bool records_at_top = false;
    /// A member on a path from the top appears twice in its object.
    std::optional<std::string> document_problem;
    /// Why the first record that cannot be stored can't.
    std::optional<std::string> record_problem;
    /// Keyed by id: the first id out of order or not above the cursor.
    std::optional<std::string> order_problem;
    /// The first `keep` records, while no record has a problem.
    std::vector<Kept> kept;
    /// Keyed by text: each kept record's key (see Event::key).
    std::vector<std::string> keys;
    /// PagePaths::read_times: each kept record's time, as text.
    std::vector<std::string> times;
    std::size_t count = 0;  ///< elements of the array of records
    std::optional<Found> next, has_more, end_of_stream;
    /// Today's protocol: "remaining" and "head_id", when they are integers
    /// within int64; anything else there is ignored.
    std::optional<std::int64_t> remaining;
    std::optional<std::int64_t> head_id;
};

/// Reads `body` once, start to end, with read_strict_json(): validates it,
/// follows every pointer of `paths` at once, finds the records, each
/// record's key parts, time and the exact bytes of its payload, refuses a
/// member on any of those paths that appears twice in its object (names
/// compared decoded) and U+0000 in a payload or a key, and checks the ids
/// (keyed by id) against `after_id` and each other: increasing, or
/// decreasing when the page comes newest first. Memory beyond the body: a
/// few dozen bytes per level of nesting and per kept record (and its key
/// and time text, when keyed by text), whatever the body holds.
ScannedPage scan_page(std::string_view body, const PagePaths& paths, std::int64_t after_id, std::size_t keep,
                      int max_depth);

}  // namespace tributary
