#include "json_key.h"

#include <spdlog/fmt/fmt.h>
#include <nlohmann/json.hpp>

#include "core/batch_rules.h"

namespace tributary {
namespace {

std::string too_long(const std::string& name) {
    return fmt::format("{} is longer than the {} bytes a key may have", name, kMaxKeyBytes);
}

// Part `i` of a key: a string decoded, an integer's digits as sent; within a
// composite key, as its JSON array writes it.
std::optional<std::string> key_part(const JsonMet& part, const std::string& name, bool composite, std::string& text) {
    if (!part.kind) return fmt::format("{} is missing", name);
    if (*part.kind == JsonKind::integer) {
        if (part.text.size() > kMaxKeyBytes) return too_long(name);
        text = std::string(part.text);
        return std::nullopt;
    }
    if (*part.kind == JsonKind::floating)
        return fmt::format("{} is a floating-point number ({}), expected a string or an integer", name,
                           shown_json_text(part.text));
    if (*part.kind != JsonKind::string)
        return fmt::format("{} is {}, expected a string or an integer", name, describe(*part.kind));
    if (part.string.raw.empty()) return fmt::format("{} is an empty string", name);
    if (part.string.has_nul) return fmt::format("{} holds U+0000, which PostgreSQL cannot store", name);
    auto decoded = decoded_json_string(part.string, kMaxKeyBytes);
    if (!decoded) return too_long(name);
    text = composite ? nlohmann::json(std::move(*decoded)).dump() : std::move(*decoded);
    return std::nullopt;
}

}  // namespace

std::optional<std::string> key_text(const std::vector<JsonMet>& parts, const std::vector<std::string>& names,
                                    std::string& text) {
    if (parts.size() == 1) return key_part(parts.front(), names.front(), false, text);
    text = "[";
    std::string part;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (auto why = key_part(parts[i], names[i], true, part)) return why;
        if (i > 0) text += ',';
        text += part;
    }
    text += ']';
    if (text.size() > kMaxKeyBytes)
        return fmt::format("the key {} is {} bytes, more than the {} a key may have", shown_json_text(text),
                           text.size(), kMaxKeyBytes);
    return std::nullopt;
}

std::string shown_json_text(std::string_view text) {
    constexpr std::size_t kShown = 40;
    std::string out(text.substr(0, kShown));
    for (char& c : out)
        if (c < 0x20 || c > 0x7e) c = '?';
    if (text.size() > kShown) out += fmt::format("... ({} characters)", text.size());
    return out;
}

}  // namespace tributary
