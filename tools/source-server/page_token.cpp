#include "page_token.h"

#include <charconv>

#include "base64.h"

namespace tributary::source_server {

std::string page_token(std::string_view tag, std::int64_t id) {
    return base64url_encode(std::string(tag) + ":" + std::to_string(id));
}

std::optional<std::int64_t> read_page_token(std::string_view token, std::string_view tag) {
    auto text = base64_decode(token);
    if (!text || text->size() <= tag.size() + 1 || text->compare(0, tag.size(), tag) != 0 ||
        (*text)[tag.size()] != ':') {
        return std::nullopt;
    }
    std::int64_t id = 0;
    const char* begin = text->data() + tag.size() + 1;
    const char* end = text->data() + text->size();
    auto [ptr, ec] = std::from_chars(begin, end, id);
    if (ec != std::errc() || ptr != end || id < 0) return std::nullopt;
    return id;
}

}  // namespace tributary::source_server
