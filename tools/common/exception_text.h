#pragma once

#include <exception>
#include <string>

namespace tributary::tools {

/// What a rethrown exception says, for an HTTP 500 body ("internal error"
/// when it says nothing).
std::string exception_text(std::exception_ptr error);

}  // namespace tributary::tools
