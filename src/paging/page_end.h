#pragma once

#include "paging_strategy.h"

namespace tributary {

/// Whether the source has nothing after this page for now. What it says
/// decides (--end-of-stream true or --has-more false: the end; --has-more
/// true or --end-of-stream false: more), else a page short of the limit is
/// the last. Trusting a "more" over the count keeps a source moving whose
/// pages are smaller than the limit asked (an API capping its page size).
bool page_is_last(const PageView& page, int limit);

}  // namespace tributary
