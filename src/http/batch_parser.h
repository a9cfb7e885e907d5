#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/fetch_result.h"
#include "fetch_limits.h"

namespace tributary {

/// Turns the body of a 200 response in tributary's own protocol into a
/// batch, or says why it cannot: parse_page() for a source with the default
/// layout and paging (after-id).
///
/// Accepts `{"events": [...]}` (beside "events", optional "remaining" and
/// "head_id"; other members are ignored) or a bare array, each element
/// `{"id": <64-bit integer>, "payload": <any JSON>}` (other members ignored).
///
/// One pass over the body (scan_page) validates all of it before anything is
/// returned: strict RFC 8259 JSON with valid UTF-8 and nesting no deeper than
/// `limits.max_depth` (counted from the top, envelope included), the shape,
/// each event, then the order of the ids; only then is the batch cut to its
/// first `limit` events. Each payload is the source's own text of the value,
/// byte for byte without the whitespace around it: numbers are never read as
/// numbers, so 1e309 or 30 digits reach jsonb as sent.
///
/// Ambiguity is refused: a member the loader reads ("events", "remaining",
/// "head_id" in the envelope; "id", "payload" in an event) may appear once,
/// names compared after their escapes are decoded.
///
/// Status, first that applies: too large, malformed (syntax, UTF-8, a lone
/// surrogate, cut short) or too deep -> transient (the next response may be
/// whole); a duplicate member in the envelope -> failing; a wrong top-level
/// shape (not an object with an "events" array, nor an array) -> transient;
/// the first event that is not an object, repeats "id" or "payload", lacks
/// an integer id within int64 or a payload, or has U+0000 in its payload
/// (jsonb refuses it, in keys as in values) -> failing; ids not strictly
/// increasing or not above `after_id` -> failing. A backlog the source
/// reports saturates at the int64 maximum; a value there that is no int64
/// is ignored. Messages are printable ASCII and quote at most 40 characters
/// of the body. Never throws except bad_alloc.
///
/// Memory beyond the body: a few bytes per level of nesting, 24 bytes per
/// kept event, and the kept payloads' copies (at most the body's size).
FetchResult parse_batch(std::string_view body, std::int64_t after_id, int limit, const FetchLimits& limits);

/// parse_batch(), taking the body: when one payload is at least half the
/// body, it is cut out of the body in place rather than copied, so a batch of
/// one huge event costs its bytes once.
FetchResult parse_owned_batch(std::string&& body, std::int64_t after_id, int limit, const FetchLimits& limits);

}  // namespace tributary
