#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/reading.h"
#include "counted_page.h"
#include "paging_strategy.h"

namespace tributary {

/// `--paginate page`: page numbers over a list ordered oldest first that
/// only grows at its end. The position is the page number ("" = the first,
/// --first-page), `taken` how many of its records are stored: a full page
/// moves on to the next number, the last one is asked again later.
class PageNumberPaging : public PagingStrategy {
public:
    explicit PageNumberPaging(Paging paging) : paging_(std::move(paging)) {}
    PageRequest request(const Cursor& at, int limit) const override;
    PageOutcome advance(const Cursor& at, const PageView& page, int limit) const override;

private:
    std::optional<std::int64_t> page_number(const Cursor& at) const;
    CountedPage counted(std::int64_t number, const PageView& page, int limit) const;
    Paging paging_;
};

}  // namespace tributary
