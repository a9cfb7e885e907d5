#pragma once

#include <utility>

#include "core/reading.h"
#include "paging_strategy.h"

namespace tributary {

/// `--paginate after-id`, tributary's own protocol: integer keys strictly
/// increasing, the cursor is the last stored one, sent as `after_id=`.
class AfterIdPaging : public PagingStrategy {
public:
    explicit AfterIdPaging(Paging paging) : paging_(std::move(paging)) {}
    PageRequest request(const Cursor& at, int limit) const override;
    PageOutcome advance(const Cursor& at, const PageView& page, int limit) const override;

private:
    Paging paging_;
};

}  // namespace tributary
