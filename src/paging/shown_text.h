#pragma once

#include <string>
#include <string_view>

namespace tributary {

/// Something a source sent (a key, a token, a URL, a timestamp), fit for a
/// problem message: in double quotes, at most 40 characters of it, printable
/// ASCII only, so that a hostile value can neither flood nor split the line.
std::string quoted(std::string_view text);

/// A URL a source sent (a next link), quoted without what may carry a
/// credential: its query ("?..." stands for it), fragment and user:password@
/// (some APIs echo an access token in their next links).
std::string quoted_url(std::string_view url);

}  // namespace tributary
