#pragma once

#include <string>
#include <vector>

#include "rate_limit_headers.h"

namespace tributary {

/// The last response's headers on a libcurl easy handle (a `CURL*`, typed
/// void* to keep curl.h out), for the readers that take a HeaderLookup.
/// Valid until the handle's next transfer.
HeaderLookup response_headers(void* easy);

/// Every value of header `name` in the last response, in order (Link may come
/// more than once).
std::vector<std::string> response_header_values(void* easy, const char* name);

}  // namespace tributary
