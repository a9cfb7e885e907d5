#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tributary::postgres {

/// Appends `text` to `out` as one element of a text[] literal: quoted, with
/// backslash and double quote escaped, so that no text (commas, braces,
/// quotes, "NULL") can change the array's shape.
void append_text_array_element(std::string& out, std::string_view text);

/// `items` as a text[] literal, every element quoted.
std::string text_array_literal(const std::vector<std::string>& items);

}  // namespace tributary::postgres
