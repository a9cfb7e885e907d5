#pragma once

#include <string>
#include <string_view>

namespace tributary {

/// The part of a JSON library message that a user can act on, safe to store.
///
/// nlohmann's messages start with a tag such as "[json.exception.parse_error.101] ";
/// the rest ("parse error at line 1, column 7: ...") is kept. They quote the
/// bytes last read, which may be broken UTF-8, and the message goes into
/// PostgreSQL and onto a terminal, so only printable ASCII is kept (anything
/// else becomes '?').
std::string readable_json_error(std::string_view what);

/// `text` with anything but printable ASCII replaced by '?', for the same reason.
std::string printable_ascii(std::string_view text);

}  // namespace tributary
