#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tributary {

/// `url` with `parameters` appended to its query, each name=value
/// URL-encoded (RFC 3986: a space is %20); a fragment dropped (never sent).
/// `url` as it was (less its fragment) when libcurl cannot parse it: the
/// request then fails naming it.
std::string with_query_parameters(const std::string& url,
                                  const std::vector<std::pair<std::string, std::string>>& parameters);

}  // namespace tributary
