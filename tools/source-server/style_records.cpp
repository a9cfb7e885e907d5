#include "style_records.h"

#include <charconv>
#include <cstdio>

#include "iso_time.h"

namespace tributary::source_server {
namespace {

constexpr std::string_view kKeyPrefix = "evt-";
constexpr std::size_t kKeyDigits = 10;

}  // namespace

std::string style_key(std::int64_t id) {
    char digits[32];
    std::snprintf(digits, sizeof digits, "%010lld", static_cast<long long>(id));
    return std::string(kKeyPrefix) + digits;
}

std::optional<std::int64_t> parse_style_key(std::string_view key) {
    if (key.size() < kKeyPrefix.size() + kKeyDigits || key.substr(0, kKeyPrefix.size()) != kKeyPrefix) {
        return std::nullopt;
    }
    key.remove_prefix(kKeyPrefix.size());
    std::int64_t id = 0;
    auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (ec != std::errc() || ptr != key.data() + key.size() || id < 0) return std::nullopt;
    return id;
}

void append_style_record(std::string& out, const EventGenerator& generator, const SourceIdentity& source,
                         const EventRef& event, KeyDamage damage) {
    out += '{';
    switch (damage) {
        case KeyDamage::none:
            out += "\"key\":\"";
            out += style_key(event.id);
            out += "\",";
            break;
        case KeyDamage::missing: break;
        case KeyDamage::boolean: out += "\"key\":true,"; break;
    }
    out += "\"id\":";
    append_int(out, event.id);
    out += ",\"updated_at\":\"";
    out += iso_ms(event.updated_ms);
    out += "\",\"payload\":";
    generator.append_payload(out, source, event);
    out += '}';
}

std::string style_records_array(const EventGenerator& generator, const SourceIdentity& source,
                                const std::vector<EventRef>& events, KeyDamage first_damage) {
    std::string out;
    out.reserve(2 + events.size() * (generator.approx_event_bytes() + 80));
    out += '[';
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (i > 0) out += ',';
        append_style_record(out, generator, source, events[i], i == 0 ? first_damage : KeyDamage::none);
    }
    out += ']';
    return out;
}

}  // namespace tributary::source_server
