#pragma once

#include <string>
#include <vector>

namespace tributary::testing {

/// The shell words of a command line: plain words and "double-quoted" or 'single-quoted' parts
/// (what docs/cookbook.md uses; no escapes, no expansions). Throws on an unbalanced quote.
std::vector<std::string> shell_words(const std::string& line);

/// Every `tributary source add` command of docs/cookbook.md, its backslash-continued lines joined.
std::vector<std::string> cookbook_source_add_commands();

}  // namespace tributary::testing
