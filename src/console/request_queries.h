#pragma once

#include <map>
#include <string>

#include "console_store.h"

namespace tributary::console {

// The query strings of the console's reads. Each parameter at most once, an
// empty value is its default, and any parameter a route does not read is
// refused: a misspelt `limt=` is a 400, not a silent default. Each throws
// std::invalid_argument with the reason.

/// GET /api/sources: pattern, state, sort, order, limit (1..500), offset.
SourceQuery source_query(const std::multimap<std::string, std::string>& query);

/// GET /api/groups/NAME: limit (1..500), offset.
DeadLetterQuery dead_letter_query(const std::multimap<std::string, std::string>& query);

/// What GET /api/tail asks for: the pattern (default `>`) and where to start.
struct TailQuery {
    std::string pattern;
    std::string from;
};

/// GET /api/tail: pattern, from (`end` by default, `beginning`, a time).
TailQuery tail_query(const std::multimap<std::string, std::string>& query);

/// Every other read: no parameter at all.
void no_query(const std::multimap<std::string, std::string>& query);

}  // namespace tributary::console
