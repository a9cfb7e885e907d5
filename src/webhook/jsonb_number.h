#pragma once

#include <string_view>

namespace tributary::webhook {

/// Whether PostgreSQL's jsonb stores the JSON number `text` (valid JSON
/// number syntax, as read_strict_json() checked it). jsonb keeps a number as
/// numeric, which refuses ("value overflows numeric format") a value whose
/// first significant digit lies more than 131071 places before the decimal
/// point, or that has more than 16383 digits after it, counting those an
/// exponent adds (0.0e-16383 too). A request holding one would fail its
/// whole group commit; refused up front, it is a 400 of its own.
bool jsonb_takes_number(std::string_view text);

}  // namespace tributary::webhook
