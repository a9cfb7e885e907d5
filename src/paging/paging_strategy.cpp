#include "paging_strategy.h"

#include "after_id_paging.h"
#include "after_key_paging.h"
#include "link_paging.h"
#include "offset_paging.h"
#include "page_number_paging.h"
#include "time_paging.h"
#include "token_paging.h"

namespace tributary {

std::unique_ptr<PagingStrategy> make_paging_strategy(const Paging& paging) {
    Paging own = paging;
    // No parameter name would send the cursor as "=value": the style's own.
    if (own.cursor_param.empty()) own.cursor_param = default_cursor_param(own.style);
    switch (own.style) {
        case PagingStyle::after_id: return std::make_unique<AfterIdPaging>(std::move(own));
        case PagingStyle::after_key: return std::make_unique<AfterKeyPaging>(std::move(own));
        case PagingStyle::cursor: return std::make_unique<TokenPaging>(std::move(own));
        case PagingStyle::link: return std::make_unique<LinkPaging>(std::move(own));
        case PagingStyle::time: return std::make_unique<TimePaging>(std::move(own));
        case PagingStyle::page: return std::make_unique<PageNumberPaging>(std::move(own));
        case PagingStyle::offset: return std::make_unique<OffsetPaging>(std::move(own));
    }
    return std::make_unique<AfterIdPaging>(std::move(own));
}

}  // namespace tributary
