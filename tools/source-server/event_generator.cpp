#include "event_generator.h"

#include <algorithm>
#include <charconv>

#include <nlohmann/json.hpp>

namespace tributary::source_server {
namespace {

constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
constexpr std::size_t kMinTable = 1 << 16;

std::uint64_t splitmix64(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

std::uint64_t fnv1a(std::string_view text) {
    std::uint64_t h = 0xCBF29CE484222325ULL;
    for (unsigned char c : text) {
        h ^= c;
        h *= 0x100000001B3ULL;
    }
    return h;
}

std::size_t decimal_digits(std::int64_t v) {
    std::size_t n = v < 0 ? 2 : 1;
    std::uint64_t u = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    while (u >= 10) {
        u /= 10;
        ++n;
    }
    return n;
}

constexpr std::string_view kSourceKey = "{\"source\":";
constexpr std::string_view kIdKey = ",\"id\":";
constexpr std::string_view kCreatedKey = ",\"created_at_us\":";
constexpr std::string_view kDataKey = ",\"data\":\"";
constexpr std::string_view kEnd = "\"}";

}  // namespace

SourceIdentity::SourceIdentity(std::string source_name)
    : name(std::move(source_name)), name_json(json_string(name)), seed(fnv1a(name)) {}

std::string json_string(const std::string& text) {
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void append_int(std::string& out, std::int64_t value) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    (void)ec;
    out.append(buf, end);
}

EventGenerator::EventGenerator(std::size_t payload_bytes) : payload_bytes_(payload_bytes) {
    std::size_t size = std::max(kMinTable, 2 * payload_bytes + 64);
    table_.resize(size);
    std::uint64_t state = 0x7472696275746172ULL;  // fixed: the filler is the same in every run
    for (std::size_t i = 0; i < size;) {
        std::uint64_t r = splitmix64(state);
        for (int k = 0; k < 10 && i < size; ++k, ++i) {
            table_[i] = kAlphabet[(r & 63) % kAlphabet.size()];
            r >>= 6;
        }
    }
}

void EventGenerator::append_filler(std::string& out, std::uint64_t seed, std::size_t n) const {
    while (n > 0) {
        std::size_t take = std::min(n, table_.size());
        std::uint64_t state = seed;
        std::size_t offset = static_cast<std::size_t>(splitmix64(state) % (table_.size() - take + 1));
        out.append(table_, offset, take);
        n -= take;
        seed = state;
    }
}

std::string_view EventGenerator::filler_block(std::size_t n) const {
    return std::string_view(table_).substr(0, std::min(n, table_.size()));
}

void EventGenerator::append_payload(std::string& out, const SourceIdentity& source, EventRef event,
                                    PayloadVariant variant) const {
    std::size_t fixed = kSourceKey.size() + source.name_json.size() + kIdKey.size() + decimal_digits(event.id) +
                        kCreatedKey.size() + decimal_digits(event.created_us) + kDataKey.size() + kEnd.size();
    std::size_t filler = payload_bytes_ > fixed ? payload_bytes_ - fixed : 0;

    out += kSourceKey;
    out += source.name_json;
    out += kIdKey;
    append_int(out, event.id);
    out += kCreatedKey;
    append_int(out, event.created_us);
    out += kDataKey;
    std::uint64_t seed = source.seed ^ (static_cast<std::uint64_t>(event.id) * 0xD6E8FEB86659FD93ULL);
    switch (variant) {
        case PayloadVariant::normal:
            append_filler(out, seed, filler);
            out += kEnd;
            break;
        case PayloadVariant::nul_in_data:
            append_filler(out, seed, filler / 2);
            out += "\\u0000";
            append_filler(out, seed + 1, filler - filler / 2);
            out += kEnd;
            break;
        case PayloadVariant::malformed:
            append_filler(out, seed, filler);
            out += "\",broken: tru}";  // unquoted key and a bad literal
            break;
    }
}

void EventGenerator::append_text(std::string& out, const SourceIdentity& source, std::int64_t id) const {
    std::uint64_t seed = source.seed ^ (static_cast<std::uint64_t>(id) * 0xA0761D6478BD642FULL);
    append_filler(out, seed, std::max<std::size_t>(8, payload_bytes_ / 2));
}

void EventGenerator::append_event(std::string& out, const SourceIdentity& source, EventRef event) const {
    out += "{\"id\":";
    append_int(out, event.id);
    out += ",\"payload\":";
    append_payload(out, source, event);
    out += '}';
}

void EventGenerator::append_events(std::string& out, const SourceIdentity& source,
                                   const std::vector<EventRef>& events) const {
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (i > 0) out += ',';
        append_event(out, source, events[i]);
    }
}

std::string EventGenerator::batch_body(const SourceIdentity& source, const std::vector<EventRef>& events) const {
    std::string out;
    out.reserve(16 + events.size() * (approx_event_bytes() + source.name_json.size()));
    out += "{\"events\":[";
    append_events(out, source, events);
    out += "]}";
    return out;
}

std::string EventGenerator::array_body(const SourceIdentity& source, const std::vector<EventRef>& events) const {
    std::string out;
    out.reserve(4 + events.size() * (approx_event_bytes() + source.name_json.size()));
    out += '[';
    append_events(out, source, events);
    out += ']';
    return out;
}

}  // namespace tributary::source_server
