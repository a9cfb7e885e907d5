#include "reading.h"

namespace tributary {

namespace {

struct StyleName {
    PagingStyle style;
    const char* name;
    const char* cursor_param;
};

constexpr StyleName kStyles[] = {
    {PagingStyle::after_id, "after-id", "after_id"},
    {PagingStyle::after_key, "after-key", "starting_after"},
    {PagingStyle::cursor, "cursor", "cursor"},
    {PagingStyle::link, "link", ""},
    {PagingStyle::time, "time", "since"},
    {PagingStyle::page, "page", "page"},
    {PagingStyle::offset, "offset", "offset"},
};

}  // namespace

const char* to_string(PagingStyle style) {
    for (const auto& s : kStyles)
        if (s.style == style) return s.name;
    return "unknown";
}

std::optional<PagingStyle> paging_style_named(const std::string& name) {
    for (const auto& s : kStyles)
        if (name == s.name) return s.style;
    return std::nullopt;
}

const char* default_cursor_param(PagingStyle style) {
    for (const auto& s : kStyles)
        if (s.style == style) return s.cursor_param;
    return "";
}

}  // namespace tributary
