#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "json_kind.h"
#include "strict_json_reader.h"

namespace tributary {

/// A value met at the place a JSON pointer names, as read_strict_json()
/// reported it: enough to make a key of it without copying the document.
struct JsonMet {
    std::optional<JsonKind> kind;  ///< nothing: not met
    std::string_view text;         ///< a scalar's text in the document
    JsonString string;             ///< a string's token
};

/// A record's key when keyed by text, from the values at its key pointers
/// (`names[i]` says how messages name part i: "key /id"): one part is a
/// string decoded or an integer's digits as sent; several are the JSON
/// array of the parts ([123,"2024-01-01T00:00:00Z"]). Returns why there is
/// no key (a part missing, of another kind, an empty string, U+0000, longer
/// than kMaxKeyBytes), or nothing with `text` set. The rule pulled and
/// pushed sources share: one event has the same key whichever way it came.
std::optional<std::string> key_text(const std::vector<JsonMet>& parts, const std::vector<std::string>& names,
                                    std::string& text);

/// `text` for a message: at most 40 characters, printable ASCII (a hostile
/// value may be megabytes long, and messages are stored and logged).
std::string shown_json_text(std::string_view text);

}  // namespace tributary
