#include "text_array.h"

namespace tributary::postgres {

void append_text_array_element(std::string& out, std::string_view text) {
    out += '"';
    for (const char ch : text) {
        if (ch == '"' || ch == '\\') out += '\\';
        out += ch;
    }
    out += '"';
}

std::string text_array_literal(const std::vector<std::string>& items) {
    std::string out = "{";
    for (const auto& item : items) {
        if (out.size() > 1) out += ',';
        append_text_array_element(out, item);
    }
    return out + "}";
}

}  // namespace tributary::postgres
