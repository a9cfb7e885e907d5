#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tributary::tools {

/// Takes one option's value: returns an error message, or "" to go on.
using OptionTaker = std::function<std::string(const std::string& name, const std::string& value)>;

/// Walks a test tool's command line: `--help`/`-h` sets `help` and stops,
/// `--verbose`/`-v` sets `verbose`; every other argument must be `--NAME VALUE`
/// or `--NAME=VALUE` with NAME among `valued`, handed to `take`. Returns the
/// first error ("" when the line is valid).
std::string walk_long_options(int argc, const char* const* argv, const std::vector<std::string>& valued, bool& help,
                              bool& verbose, const OptionTaker& take);

}  // namespace tributary::tools
