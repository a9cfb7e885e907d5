#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tributary {

/// Where one event's payload value lies in the response body: the bytes
/// [begin, end), without the whitespace around the value.
struct PayloadSpan {
    std::size_t index = 0;  ///< the event's position in the events array
    std::size_t begin = 0;
    std::size_t end = 0;

    std::string_view in(std::string_view body) const { return body.substr(begin, end - begin); }
};

/// The payload of every event in a body that nlohmann::json::parse has already
/// accepted, as byte spans of the body, so each payload can be handed on as the
/// source wrote it instead of being re-serialised.
///
/// The events array is the top-level array, or the "events" member of the
/// top-level object. Each element that is an object with a "payload" member
/// gives one span, in array order; other elements give none. On duplicate
/// keys the last one wins, as in nlohmann (and in jsonb). Keys are compared
/// after their escapes are decoded: "pay\u006coad" is "payload". A leading
/// UTF-8 byte order mark is skipped, as nlohmann does.
///
/// Only as much syntax is checked as the walk needs: nothing when the body is
/// not a JSON value of that shape (no "events", not an array, cut short ...),
/// but an invalid body may still give spans. Iterative, so the nesting depth
/// costs no stack; one pass over the body. Never throws except bad_alloc.
///
/// Only the elements before `first_events` give spans (the rest of the body
/// is still walked), so a caller that keeps a few events of a long list does
/// not pay for a span of each.
std::optional<std::vector<PayloadSpan>> payload_spans(
    std::string_view body, std::size_t first_events = std::numeric_limits<std::size_t>::max());

/// The value of a JSON string token (`token` includes both quotes), its
/// escapes decoded to UTF-8 as a JSON parser would, surrogate pairs included.
/// Nothing when the token is not a well-formed string (a bad escape, a lone
/// surrogate, missing quotes). Other bytes are copied as they are.
std::optional<std::string> unescape_json_string(std::string_view token);

}  // namespace tributary
