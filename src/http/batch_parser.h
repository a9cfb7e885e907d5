#pragma once

#include <cstdint>
#include <string_view>

#include "core/fetch_result.h"
#include "fetch_limits.h"

namespace tributary {

/// Turns the body of a 200 response into a batch, or says why it cannot.
///
/// Accepts `{"events": [...]}` (other top-level keys are ignored) or a bare
/// array, each element `{"id": <64-bit integer>, "payload": <any JSON>}`.
/// Where a key repeats, the last one counts. The whole body is validated
/// before anything is returned, in this order: size and nesting depth (a scan
/// of the raw text, so a hostile body cannot make the parser recurse), JSON
/// syntax, shape, each event's id and payload, then batch_violation(); only
/// then is the batch cut to its first `limit` events. Each payload comes back
/// as the source's own text of the value, byte for byte without the
/// whitespace around it (never re-serialised, so numbers keep every digit;
/// jsonb normalises it on the way in).
///
/// The body is validated as the parser reads it, never held as a document,
/// so memory beyond the body is the events kept, 8 bytes per event and the
/// parser's buffers, at most about the body's size (see BatchOutline),
/// whatever a hostile source sends.
///
/// Status: malformed, truncated, too large or too deep, or a wrong top-level
/// shape -> transient (the body may be whole next time); an event without an
/// integer id or a payload, ids out of order or not above `after_id`, a
/// string PostgreSQL cannot store (U+0000), or a number beyond the range of a
/// double anywhere (the parser cannot read past it) -> failing. A backlog the
/// source reports ("remaining", "head_id") saturates at the int64 maximum.
/// Never throws on any input.
FetchResult parse_batch(std::string_view body, std::int64_t after_id, int limit, const FetchLimits& limits);

}  // namespace tributary
