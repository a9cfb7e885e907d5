#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cursor.h"
#include "core/fetch_result.h"
#include "core/source.h"
#include "fetch_limits.h"

namespace tributary {

/// What one page of a source holds, found in one pass over its body.
struct ParsedPage {
    /// ok: the page's records (see parse_page); else why the page cannot be
    /// used, with its status.
    FetchResult batch;
    /// --paginate time with a --time-field: each record's time as text (a
    /// string decoded, a number as sent), one per record; else empty.
    std::vector<std::string> times;
    std::optional<std::string> next;    ///< the value at --next: a string decoded, a number as sent; null: none
    std::optional<bool> has_more;       ///< the boolean at --has-more (null: none)
    std::optional<bool> end_of_stream;  ///< the boolean at --end-of-stream (null: none)
};

/// Turns the body of a 200 response into a page of `source`'s records, or
/// says why it cannot, following the source's RecordLayout and the pointers
/// its Paging reads (RFC 6901; "" is the whole value, a token that is a
/// decimal index names an array element, and --next, --has-more,
/// --end-of-stream are not read when empty).
///
/// One pass over the body (scan_page) validates all of it before anything
/// is returned: strict RFC 8259 JSON with valid UTF-8 and nesting no deeper
/// than `limits.max_depth` (counted from the top), the records array, each
/// record, the values the paging reads. Each payload is the source's own
/// text of the value, byte for byte without the whitespace around it.
///
/// Keyed by id (Source::keyed_by_id): one key, an integer within int64,
/// ids strictly increasing and above `cursor.id()`; the batch is cut to its
/// first `limit` records; Event::id set. Today's protocol keeps today's
/// messages, and parse_batch() is this. Keyed by text: every record is kept
/// (the paging strategy decides which are new); Event::key is a string key
/// decoded, an integer key's digits as sent, a composite key the JSON array
/// of its parts ([123,"2024-01-01T00:00:00Z"]); Event::id is 0. With
/// RecordLayout::newest_first the records (and times) are returned oldest
/// first, and ids must decrease in the body.
///
/// Ambiguity is refused: a member on the way of any pointer read may appear
/// once in its object, names compared after their escapes are decoded.
///
/// Status, first that applies: too large, malformed or too deep ->
/// transient; a layout that cannot be read (see compile_page_paths) ->
/// failing; a duplicate member on the way of a pointer from the top ->
/// failing; today's protocol with no "events" array nor a bare array ->
/// transient; no array at --records -> failing; --next not a string, number
/// or null, --has-more or --end-of-stream not a boolean or null -> failing;
/// the first record that is not an object, has a duplicate member on the
/// way of a pointer, a key missing, of the wrong type, empty, over
/// kMaxKeyBytes or holding U+0000, no payload or U+0000 in it, no time
/// (a string or number) -> failing; ids out of order -> failing. Messages
/// are one line of printable ASCII and quote at most 40 characters of the
/// body. Never throws except bad_alloc.
///
/// Memory: when one payload is at least half the body, it is cut out of the
/// body in place rather than copied, so a page of one huge record costs its
/// bytes once.
ParsedPage parse_page(std::string&& body, const Source& source, const Cursor& cursor, int limit,
                      const FetchLimits& limits);

/// parse_page() on a body the caller keeps: every payload is copied.
ParsedPage parse_borrowed_page(std::string_view body, const Source& source, const Cursor& cursor, int limit,
                               const FetchLimits& limits);

}  // namespace tributary
