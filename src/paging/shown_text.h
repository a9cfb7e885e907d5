#pragma once

#include <string>
#include <string_view>

namespace tributary {

/// Something a source sent (a key, a token, a URL, a timestamp), fit for a
/// problem message: in double quotes, at most 40 characters of it, printable
/// ASCII only, so that a hostile value can neither flood nor split the line.
std::string quoted(std::string_view text);

}  // namespace tributary
