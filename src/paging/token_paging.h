#pragma once

#include <utility>

#include "core/reading.h"
#include "paging_strategy.h"

namespace tributary {

/// `--paginate cursor`: an opaque token in the body (--next) names the next
/// page and is sent back as the cursor parameter. The position is the token
/// that produced the current page ("" = the first page, nothing sent).
class TokenPaging : public PagingStrategy {
public:
    explicit TokenPaging(Paging paging) : paging_(std::move(paging)) {}
    PageRequest request(const Cursor& at, int limit) const override;
    PageOutcome advance(const Cursor& at, const PageView& page, int limit) const override;

private:
    Paging paging_;
};

}  // namespace tributary
