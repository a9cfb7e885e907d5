#pragma once

#include <utility>

#include "core/reading.h"
#include "paging_strategy.h"

namespace tributary {

/// `--paginate link`: each page names the next one's URL (the Link header's
/// rel="next", or the body's at --next), already absolute and checked
/// against the hosts it may lead to by the fetcher. The position is the URL
/// of the current page ("" = the source's URL with its parameters).
class LinkPaging : public PagingStrategy {
public:
    explicit LinkPaging(Paging paging) : paging_(std::move(paging)) {}
    PageRequest request(const Cursor& at, int limit) const override;
    PageOutcome advance(const Cursor& at, const PageView& page, int limit) const override;

private:
    Paging paging_;
};

}  // namespace tributary
