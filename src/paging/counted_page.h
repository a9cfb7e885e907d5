#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/reading.h"
#include "paging_strategy.h"

namespace tributary {

/// A page of a style that places records by counting them (page, offset):
/// where it is, for messages ("page 3", "offset 200"), and how many
/// records of the list lie before its end when that is known (offset:
/// always; page: when pages are of the limit asked).
struct CountedPage {
    std::string where;
    std::optional<std::int64_t> through;
};

/// Why a counted page cannot be placed: the API did not serve the page
/// asked, and counting its records would move the cursor wrongly. Checked,
/// of a page with records:
///  - larger than `limit` (the API ignores --limit-param);
///  - smaller than `limit` while the answer says more follow: a Link
///    rel="next", or an X-Total-Count beyond `through` (the API pages by a
///    size of its own);
///  - ending past its X-Total-Count (the API ignores --cursor-param and
///    serves the same records again).
/// The first two only when the body says nothing of the end (--has-more,
/// --end-of-stream): an API that does pages by its own size and says so.
/// Messages name the parameter sent and the flag that fixes it.
std::optional<std::string> counted_page_problem(const CountedPage& counted, const PageView& page, int limit,
                                                const Paging& paging);

}  // namespace tributary
