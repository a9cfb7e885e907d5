#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pushed_events.h"
#include "pushed_source.h"

namespace tributary::webhook {

/// What a request's body holds: its events, keyed and ready to store, or why
/// none of it can be stored (the 400's message; one line of printable ASCII
/// that quotes at most 40 characters of the body).
struct PushedBody {
    std::vector<PushedEvent> events;
    std::optional<std::string> refusal;
};

/// Why `source`'s key pointers cannot key anything (none, more than
/// kMaxKeyParts, one that is no JSON pointer), or nothing when they can. The
/// catalogue's checks should make this impossible; the receiver answers 503
/// rather than guessing.
std::optional<std::string> key_pointers_problem(const PushedSource& source);

/// Reads a request's body into its events: all of them or, at the first
/// problem, none.
///
/// Shape: NDJSON (one event per non-empty line) when `content_type` is
/// application/x-ndjson or application/jsonl, or when the body is not one
/// JSON value but each of its non-empty lines is (a sender that says
/// application/json of NDJSON); otherwise one JSON value: an array is its
/// elements, each one event (an empty array: no events), anything else is
/// one event. Each payload is the event's own text, byte for byte, without
/// the whitespace around it.
///
/// Refused: what read_strict_json() refuses (invalid UTF-8, nesting deeper
/// than the pulled parser allows, ...); U+0000 anywhere in an event (jsonb
/// cannot store it); a number jsonb refuses (jsonb_takes_number); a member
/// on the way of a key pointer twice in its object (ambiguous).
///
/// Keys: when the request had the source's key header (`key_header_value`),
/// its value keys a one-event request, and "VALUE#INDEX" (from 0) each event
/// of a longer one; the value must be 1 to kMaxKeyBytes bytes with its
/// suffix. Otherwise the source's key pointers, as a pulled source's
/// (key_text): a string decoded, an integer's digits, several parts the
/// JSON array of them; missing, another kind, empty or too long is refused,
/// naming the event's index and the pointer.
PushedBody read_pushed_body(std::string_view body, std::string_view content_type, const PushedSource& source,
                            const std::optional<std::string>& key_header_value);

}  // namespace tributary::webhook
