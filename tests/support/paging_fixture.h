#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/event.h"
#include "core/reading.h"
#include "paging/paging_strategy.h"

namespace tributary::testing {

/// A page as a parser would see it, held so that a PageView (all
/// references) can point into it.
struct PageFixture {
    PageFixture() = default;
    explicit PageFixture(EventBatch page_records) : records(std::move(page_records)) {}

    EventBatch records;
    std::vector<std::string> times;
    std::optional<std::string> next;
    std::optional<bool> has_more;
    std::optional<bool> end_of_stream;
    std::optional<std::string> link_next;
    bool link_header_next = false;
    std::optional<std::int64_t> total_count;

    PageView view() const {
        return PageView{records, times, next, has_more, end_of_stream, link_next, link_header_next, total_count};
    }
};

/// Records keyed by text (every style but after-id).
inline EventBatch records_keyed(std::initializer_list<std::string> keys) {
    EventBatch batch;
    for (const auto& key : keys) batch.emplace_back(0, "{}", key);
    return batch;
}

/// `n` records keyed "k0", "k1", ...
inline EventBatch records_counted(std::size_t n, std::size_t first = 0) {
    EventBatch batch;
    for (std::size_t i = first; i < first + n; ++i) batch.emplace_back(0, "{}", "k" + std::to_string(i));
    return batch;
}

inline EventBatch records_with_ids(std::initializer_list<std::int64_t> ids) {
    EventBatch batch;
    for (const auto id : ids) batch.emplace_back(id, "{}");
    return batch;
}

/// A style's paging as the CLI would set it up: its own cursor parameter.
inline Paging paging_of(PagingStyle style) {
    Paging paging;
    paging.style = style;
    paging.cursor_param = default_cursor_param(style);
    return paging;
}

/// A request's query as "a=1&b=2" (unescaped: for comparing only).
inline std::string query_of(const PageRequest& request) {
    std::string out;
    for (const auto& [name, value] : request.query) out += (out.empty() ? "" : "&") + name + "=" + value;
    return out;
}

/// Problem messages are one line of printable ASCII, and short.
inline bool printable_line(const std::string& text) {
    if (text.size() > 300) return false;
    for (const char c : text)
        if (c < 0x20 || c > 0x7e) return false;
    return true;
}

}  // namespace tributary::testing
