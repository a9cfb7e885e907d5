#include "counted_page.h"

#include <cstddef>

namespace tributary {

namespace {

std::string limit_ignored(const Paging& paging) {
    if (paging.limit_param.empty()) return "no page size is sent (--limit-param \"\")";
    return "the API ignores " + paging.limit_param;
}

constexpr const char* kLimitParamFix = "set --limit-param to the parameter it reads (e.g. _limit, per_page)";

/// What in the answer says more records follow this page; empty when nothing does.
std::string more_follow(const CountedPage& counted, const PageView& page) {
    std::string signals;
    if (page.link_header_next) signals = "a Link rel=\"next\"";
    if (page.total_count && counted.through && *page.total_count > *counted.through)
        signals += (signals.empty() ? "" : " and ") + std::string("X-Total-Count ") + std::to_string(*page.total_count);
    return signals;
}

}  // namespace

std::optional<std::string> counted_page_problem(const CountedPage& counted, const PageView& page, int limit,
                                                const Paging& paging) {
    const std::size_t size = page.records.size();
    if (size == 0) return std::nullopt;
    const std::string holds = counted.where + " holds " + std::to_string(size) + " records";
    const bool body_says = page.has_more || page.end_of_stream;
    const auto asked = static_cast<std::size_t>(limit > 0 ? limit : 0);
    if (!body_says && size > asked)
        return holds + ", more than the " + std::to_string(asked) + " asked: " + limit_ignored(paging) + "; " +
               kLimitParamFix + " or --batch-size to its page size";
    if (!body_says && size < asked) {
        const std::string signals = more_follow(counted, page);
        if (!signals.empty())
            return holds + ", fewer than the " + std::to_string(asked) + " asked, yet the answer says more follow (" +
                   signals + "): " + limit_ignored(paging) + " or caps it; " + kLimitParamFix + " or --batch-size " +
                   std::to_string(size);
    }
    if (page.total_count && counted.through && *counted.through > *page.total_count)
        return holds + ", ending at record " + std::to_string(*counted.through) + ", past the X-Total-Count " +
               std::to_string(*page.total_count) + ": the API ignores " + paging.cursor_param +
               "? set --cursor-param to the parameter it reads (e.g. _page, _start, skip)";
    return std::nullopt;
}

}  // namespace tributary
