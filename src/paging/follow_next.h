#pragma once

#include <optional>
#include <string>

#include "paging_strategy.h"

namespace tributary {

/// The styles that follow what each page names as the next one: `cursor`
/// (a token) and `link` (a URL). The position is what produced the current
/// page and `taken` how many of its records are stored. A page with a next
/// one stores its records after `taken` and moves on; the last page stays
/// the position, `taken` its size, and is asked again later: records
/// appended to it since then come after the `taken` ones.
struct FollowedNext {
    /// What the next value is, for messages: "next token", "next link".
    std::string what;
    /// The next value the page named; empty text counts as none.
    std::optional<std::string> value;
    /// Values are URLs: messages quote them without their query.
    bool urls = false;
};

PageOutcome follow_next(const Cursor& at, const PageView& page, const FollowedNext& next);

}  // namespace tributary
