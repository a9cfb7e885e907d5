#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tributary {

/// Where a source's answer holds its records, and where in each record its
/// key and payload are: RFC 6901 JSON pointers ("" is the whole value).
struct RecordLayout {
    /// The array of records. Empty: tributary's own protocol, the body's
    /// "events" member or the body itself when it is an array.
    std::optional<std::string> records;
    /// Within a record; more than one: a composite key (stored as the JSON
    /// array of the parts). Today's protocol: {"/id"}.
    std::vector<std::string> key{"/id"};
    /// Within a record. Empty: "/payload" under today's protocol (no
    /// `records`), else the whole record.
    std::optional<std::string> payload;
    /// Records in each page come newest first (Stripe's ending_before,
    /// Slack): the page is read in reverse.
    bool newest_first = false;

    bool standard() const { return !records && !payload; }
    std::string payload_pointer() const { return payload ? *payload : records ? "" : "/payload"; }
};

/// How a source is asked for the page after a cursor (docs/sources.md).
enum class PagingStyle {
    after_id,   ///< integer keys strictly increasing; cursor = the last key
    after_key,  ///< opaque keys in the API's order; cursor = the last record's key
    cursor,     ///< an opaque token the body gives for the next page
    link,       ///< the next page's URL, from the Link header or the body
    time,       ///< a timestamp watermark, re-asked with a lookback
    page,       ///< page numbers over a list ordered oldest first
    offset,     ///< record offsets over a list ordered oldest first
};

const char* to_string(PagingStyle style);
/// The style a `--paginate` value names (after-id, after-key, ...).
std::optional<PagingStyle> paging_style_named(const std::string& name);

/// The query parameter that carries the cursor, unless `--cursor-param` says.
const char* default_cursor_param(PagingStyle style);

struct Paging {
    PagingStyle style = PagingStyle::after_id;
    std::string cursor_param = "after_id";  ///< see default_cursor_param
    std::string limit_param = "limit";      ///< empty: no limit is sent
    /// Fixed query parameters, sent with every request in this order.
    std::vector<std::pair<std::string, std::string>> params;
    /// JSON pointer in the body: the next token (cursor), the next URL (link;
    /// empty: the Link header), the next start time (time).
    std::string next;
    std::string has_more;              ///< JSON pointer to a boolean: false = the end for now
    std::string end_of_stream;         ///< JSON pointer to a boolean: true = the end for now (time)
    std::string time_field;            ///< time: JSON pointer within a record to its timestamp
    std::chrono::seconds lookback{0};  ///< time: re-asked window before the watermark
    std::int64_t first_page = 1;       ///< page: the number of the first page
    /// after-id, after-key: the cursor parameter is inclusive (id_gte,
    /// PostgREST's gte.): a page may start with the last record stored,
    /// which is then not new.
    bool inclusive = false;
    /// link: hosts a next link may lead to besides the source URL's own.
    std::vector<std::string> allowed_hosts;
};

}  // namespace tributary
