#include "json_error_text.h"

namespace tributary {

std::string readable_json_error(std::string_view what) {
    if (!what.empty() && what.front() == '[') {
        const auto end = what.find("] ");
        if (end != std::string_view::npos) what.remove_prefix(end + 2);
    }
    return printable_ascii(what);
}

std::string printable_ascii(std::string_view text) {
    std::string out(text);
    for (char& c : out)
        if (c < 0x20 || c > 0x7e) c = '?';
    return out;
}

}  // namespace tributary
