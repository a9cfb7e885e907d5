#include "page_query.h"

#include <utility>

namespace tributary {

PageRequest page_query(const Paging& paging, const std::optional<std::string>& cursor_value, int limit) {
    PageRequest request;
    request.query = paging.params;
    if (cursor_value) request.query.emplace_back(paging.cursor_param, *cursor_value);
    if (!paging.limit_param.empty()) request.query.emplace_back(paging.limit_param, std::to_string(limit));
    return request;
}

PageRequest refused_request(std::string problem) {
    PageRequest request;
    request.problem = std::move(problem);
    return request;
}

PageOutcome refused_page(const Cursor& at, std::string problem) {
    PageOutcome outcome;
    outcome.problem = std::move(problem);
    outcome.next = at;
    return outcome;
}

}  // namespace tributary
