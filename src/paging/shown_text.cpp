#include "shown_text.h"

namespace tributary {

std::string quoted(std::string_view text) {
    constexpr std::size_t kShown = 40;
    std::string out = "\"";
    for (const char ch : text.substr(0, kShown)) {
        const auto byte = static_cast<unsigned char>(ch);
        out += (byte >= 0x20 && byte < 0x7f) ? ch : '?';
    }
    out += '"';
    if (text.size() > kShown) out += "... (" + std::to_string(text.size()) + " characters)";
    return out;
}

}  // namespace tributary
