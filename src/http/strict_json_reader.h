#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "json_kind.h"

namespace tributary {

/// One string token as the reader found it: its bytes between the quotes
/// (escapes not decoded) and what a caller may need to know of its value.
struct JsonString {
    std::string_view raw;  ///< between the quotes, as written
    bool escaped = false;  ///< holds at least one backslash escape
    bool has_nul = false;  ///< holds `\u0000`, which PostgreSQL cannot store
};

/// Receives what StrictJsonReader finds, in the order of the text. Offsets
/// are bytes of the text given to read_strict_json().
///
/// A member's name always comes just before its value, so a visitor needs
/// to remember only the last name to know which member a value is.
class JsonVisitor {
public:
    virtual ~JsonVisitor() = default;
    /// An object's member name.
    virtual void name(const JsonString& name) = 0;
    /// An object or array opens at byte `at`.
    virtual void open(JsonKind kind, std::size_t at) = 0;
    /// The innermost open object or array closes; `end` is one past its
    /// closing bracket.
    virtual void close(std::size_t end) = 0;
    /// A string, number, boolean or null at bytes [begin, end). `string` is
    /// set for strings only. Numbers are `integer` when written without a
    /// fraction or exponent, `floating` otherwise; their value is left to
    /// the visitor, as text.
    virtual void scalar(JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string) = 0;
};

/// Why a text is not a JSON value the reader accepts.
struct JsonSyntaxError {
    std::size_t at = 0;     ///< the byte where reading stopped
    std::string what;       ///< "unexpected end of input", "invalid UTF-8 in a string", ...
    bool too_deep = false;  ///< the text nests deeper than allowed (it may be valid JSON)
};

/// Reads `text` once, start to end, as one JSON value (RFC 8259, strictly:
/// UTF-8 checked, no lone surrogates, no control characters in strings, no
/// trailing commas or content; a UTF-8 byte order mark at the start is
/// skipped), telling `visitor` what it finds. Stops at the first error.
///
/// Iterative: nesting costs one byte of state per level, no stack, and no
/// more than `max_depth` levels are opened. Allocates nothing per value;
/// strings are checked where they lie, never copied. Never throws except
/// bad_alloc (or what the visitor throws).
std::optional<JsonSyntaxError> read_strict_json(std::string_view text, int max_depth, JsonVisitor& visitor);

/// The value of a name or string that read_strict_json() accepted (so its
/// escapes are well-formed), decoded to UTF-8, or nothing when it decodes to
/// more than `max_bytes`: enough to compare a name with the few a caller
/// looks for, without a hostile megabyte-long name costing a megabyte.
std::optional<std::string> decoded_json_string(const JsonString& string, std::size_t max_bytes);

}  // namespace tributary
