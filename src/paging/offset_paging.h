#pragma once

#include <utility>

#include "core/reading.h"
#include "paging_strategy.h"

namespace tributary {

/// `--paginate offset` (`page` with --cursor-param offset in the issue's
/// words): record offsets over a list ordered oldest first that only grows
/// at its end. The position is the offset of the next record to read
/// ("" = 0); it moves by the records of each page.
class OffsetPaging : public PagingStrategy {
public:
    explicit OffsetPaging(Paging paging) : paging_(std::move(paging)) {}
    PageRequest request(const Cursor& at, int limit) const override;
    PageOutcome advance(const Cursor& at, const PageView& page, int limit) const override;

private:
    Paging paging_;
};

}  // namespace tributary
