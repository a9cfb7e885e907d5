#pragma once

#include <string>

namespace tributary {

/// A source URL fit for logs and listings: queries and user:password@ often
/// carry credentials, so it shows neither.
std::string shown_url(const std::string& url);

}  // namespace tributary
