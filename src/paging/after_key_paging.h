#pragma once

#include <utility>

#include "core/reading.h"
#include "paging_strategy.h"

namespace tributary {

/// `--paginate after-key` (Stripe's starting_after, Intercom): opaque keys
/// in the API's order; the position is the last stored record's key, sent
/// back as the cursor parameter ("" = from the start, nothing sent).
class AfterKeyPaging : public PagingStrategy {
public:
    explicit AfterKeyPaging(Paging paging) : paging_(std::move(paging)) {}
    PageRequest request(const Cursor& at, int limit) const override;
    PageOutcome advance(const Cursor& at, const PageView& page, int limit) const override;

private:
    Paging paging_;
};

}  // namespace tributary
