#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "json_kind.h"

namespace tributary {

/// An event's "id" member as read: the id, or why the value is not one.
struct IdReading {
    std::int64_t value = 0;
    std::string problem;  ///< e.g. "id is a string, expected an integer"; empty when `value` is the id
};

/// The parser hands over numbers in one of three C++ types, by their text:
/// integers that fit int64, larger ones that fit uint64, and all the others
/// (fractions, exponents, integers beyond uint64) as doubles.
IdReading read_id(std::int64_t value);
IdReading read_id(std::uint64_t value);
IdReading read_id(double value);
/// A value of any other kind, which is never an id.
IdReading read_id(JsonKind kind);

/// What one element of the events list holds, as far as the checks go. When
/// a key repeats, the last member counts, as in a parsed document.
struct EventFields {
    std::size_t index = 0;  ///< position in the events list
    JsonKind kind = JsonKind::object;
    std::optional<IdReading> id;  ///< the "id" member, if any
    bool has_payload = false;     ///< whether there is a "payload" member
    /// Where the payload holds U+0000 ("a key" or "a string value", the first
    /// in the text), or null when it does not.
    const char* payload_nul = nullptr;
};

/// How messages name an event: "event #3", or "event #3 (id 7)" once it has
/// a valid id.
std::string event_label(const EventFields& event);

/// Why the event cannot be stored, checking in this order: an object, an
/// integer id within int64, a payload, no U+0000 in the payload (PostgreSQL's
/// jsonb refuses it, in keys as in values). Nothing when it can; its id is
/// then `event.id->value`.
std::optional<std::string> event_problem(const EventFields& event);

}  // namespace tributary
