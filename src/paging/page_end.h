#pragma once

#include "paging_strategy.h"

namespace tributary {

/// Whether the source has nothing after this page for now. What it says
/// decides (--end-of-stream true or --has-more false: the end; --has-more
/// true or --end-of-stream false: more), else a page short of the limit is
/// the last. Trusting a "more" over the count keeps a source moving whose
/// pages are smaller than the limit asked (an API capping its page size).
bool page_is_last(const PageView& page, int limit);

/// page_is_last() for the styles that move by key (after-id, after-key):
/// a short page whose answer has a Link rel="next" is not the last either,
/// when the body says nothing of the end. Such an API caps its page below
/// the limit asked; reading on at once is right, as the cursor moves by
/// the records' own keys, and waiting for the next poll would only slow a
/// catch-up to a page per poll.
bool keyed_page_is_last(const PageView& page, int limit);

}  // namespace tributary
