#include "json_spans.h"

namespace tributary {
namespace {

// Every walker below takes the index of the first byte of what it reads and
// returns the index just past it, or `fail` when the text is not what a valid
// body would hold there. The body has been parsed already, so "fail" means a
// bug or a body that did not come through the parser; either way, no span.
constexpr std::size_t fail = std::string_view::npos;

// JSON's whitespace, exactly: nlohmann (like RFC 8259) allows no other.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::size_t skip_space(std::string_view s, std::size_t i) {
    while (i < s.size() && is_space(s[i])) ++i;
    return i;
}

// nlohmann skips a UTF-8 byte order mark at the very start of the input (and
// nowhere else), so an accepted body may begin with one.
std::size_t skip_bom(std::string_view s) { return s.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0; }

// s[i] is the opening quote. A backslash always escapes exactly the next
// byte; the four hex digits of \uXXXX need no care, they are plain text.
// (A plain loop: find_first_of with a set of characters was twice as slow.)
std::size_t skip_string(std::string_view s, std::size_t i) {
    for (++i; i < s.size(); ++i) {
        if (s[i] == '"') return i + 1;
        if (s[i] == '\\') ++i;
    }
    return fail;
}

// A number or true/false/null: everything up to the next delimiter. Which
// bytes they may hold is the parser's business; it has checked them.
std::size_t skip_scalar(std::string_view s, std::size_t i) {
    const std::size_t start = i;
    while (i < s.size() && !is_space(s[i]) && s[i] != ',' && s[i] != ']' && s[i] != '}' && s[i] != ':' &&
           s[i] != '"' && s[i] != '[' && s[i] != '{')
        ++i;
    return i == start ? fail : i;
}

// Any value. For an array or object, counting brackets is enough to find its
// end, since the body is valid JSON and strings (whose brackets do not count)
// are skipped whole; a counter, not recursion, so depth costs no stack.
std::size_t skip_value(std::string_view s, std::size_t i) {
    if (i >= s.size()) return fail;
    if (s[i] == '"') return skip_string(s, i);
    if (s[i] != '[' && s[i] != '{') return skip_scalar(s, i);
    std::size_t depth = 0;
    while (i < s.size()) {
        const char c = s[i];
        if (c == '"') {
            i = skip_string(s, i);
            if (i == fail) return fail;
            continue;
        }
        if (c == '[' || c == '{')
            ++depth;
        else if ((c == ']' || c == '}') && --depth == 0)
            return i + 1;
        ++i;
    }
    return fail;
}

// Reads the four hex digits at s[i..i+3].
std::optional<char32_t> hex4(std::string_view s, std::size_t i) {
    if (s.size() < i + 4) return std::nullopt;
    char32_t v = 0;
    for (std::size_t k = i; k < i + 4; ++k) {
        const char c = s[k];
        const int d = c >= '0' && c <= '9'   ? c - '0'
                      : c >= 'a' && c <= 'f' ? c - 'a' + 10
                      : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                             : -1;
        if (d < 0) return std::nullopt;
        v = v * 16 + static_cast<char32_t>(d);
    }
    return v;
}

void append_utf8(std::string& out, char32_t cp) {
    const auto byte = [&](char32_t b) { out += static_cast<char>(b); };
    if (cp < 0x80) {
        byte(cp);
    } else if (cp < 0x800) {
        byte(0xC0 | (cp >> 6));
        byte(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        byte(0xE0 | (cp >> 12));
        byte(0x80 | ((cp >> 6) & 0x3F));
        byte(0x80 | (cp & 0x3F));
    } else {
        byte(0xF0 | (cp >> 18));
        byte(0x80 | ((cp >> 12) & 0x3F));
        byte(0x80 | ((cp >> 6) & 0x3F));
        byte(0x80 | (cp & 0x3F));
    }
}

// The \uXXXX escape starting at s[i] (the backslash), followed by a second one
// when the first is a high surrogate: returns the index past it, or `fail`
// for a lone or reversed surrogate, which nlohmann rejects too.
std::size_t decode_unicode(std::string_view s, std::size_t i, std::string& out) {
    const auto first = hex4(s, i + 2);
    if (!first || (*first >= 0xDC00 && *first <= 0xDFFF)) return fail;
    if (*first < 0xD800 || *first > 0xDBFF) {
        append_utf8(out, *first);
        return i + 6;
    }
    if (s.substr(i + 6, 2) != "\\u") return fail;
    const auto second = hex4(s, i + 8);
    if (!second || *second < 0xDC00 || *second > 0xDFFF) return fail;
    append_utf8(out, 0x10000 + ((*first - 0xD800) << 10) + (*second - 0xDC00));
    return i + 12;
}

// The escape starting at s[i] (the backslash): returns the index past it.
std::size_t decode_escape(std::string_view s, std::size_t i, std::string& out) {
    if (i + 1 >= s.size()) return fail;
    switch (s[i + 1]) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': return decode_unicode(s, i, out);
        default: return fail;
    }
    return i + 2;
}

// Whether the string token `key` (quotes included) means `name`. Most keys
// hold no escape and compare as they are; the others are decoded first, as
// the parser decoded them.
bool key_is(std::string_view key, std::string_view name) {
    const std::string_view raw = key.substr(1, key.size() - 2);
    if (raw.find('\\') == std::string_view::npos) return raw == name;
    const auto decoded = unescape_json_string(key);
    return decoded && *decoded == name;
}

// The object whose '{' is at s[i]. `on_member(key, value_begin)` reads each
// member's value (key is the raw string token) and returns the index past it,
// so that a caller interested in a value walks it once, not twice.
template <typename OnMember>
std::size_t walk_object(std::string_view s, std::size_t i, OnMember on_member) {
    i = skip_space(s, i + 1);
    if (i < s.size() && s[i] == '}') return i + 1;
    while (i < s.size() && s[i] == '"') {
        const std::size_t key_end = skip_string(s, i);
        if (key_end == fail) return fail;
        const std::string_view key = s.substr(i, key_end - i);
        i = skip_space(s, key_end);
        if (i >= s.size() || s[i] != ':') return fail;
        i = on_member(key, skip_space(s, i + 1));
        if (i == fail) return fail;
        i = skip_space(s, i);
        if (i < s.size() && s[i] == '}') return i + 1;
        if (i >= s.size() || s[i] != ',') return fail;
        i = skip_space(s, i + 1);
    }
    return fail;
}

// The array whose '[' is at s[i]; `on_element(index, begin)` reads each
// element and returns the index past it.
template <typename OnElement>
std::size_t walk_array(std::string_view s, std::size_t i, OnElement on_element) {
    i = skip_space(s, i + 1);
    if (i < s.size() && s[i] == ']') return i + 1;
    for (std::size_t index = 0; i < s.size(); ++index) {
        i = on_element(index, i);
        if (i == fail) return fail;
        i = skip_space(s, i);
        if (i < s.size() && s[i] == ']') return i + 1;
        if (i >= s.size() || s[i] != ',') return fail;
        i = skip_space(s, i + 1);
    }
    return fail;
}

// One element of the events array, starting at s[i]: adds the span of its
// "payload" (the last one, if the key repeats) when it is an object with one.
std::size_t read_element(std::string_view s, std::size_t i, std::size_t index, std::vector<PayloadSpan>& spans) {
    if (s[i] != '{') return skip_value(s, i);
    std::optional<PayloadSpan> payload;
    const std::size_t end = walk_object(s, i, [&](std::string_view key, std::size_t value) {
        const std::size_t value_end = skip_value(s, value);
        if (value_end != fail && key_is(key, "payload")) payload = PayloadSpan{index, value, value_end};
        return value_end;
    });
    if (end != fail && payload) spans.push_back(*payload);
    return end;
}

// The events array whose '[' is at s[i]; `spans` is replaced, not added to,
// because a later "events" member overrides an earlier one. Elements from
// `first` on are only skipped.
std::size_t read_events(std::string_view s, std::size_t i, std::size_t first, std::vector<PayloadSpan>& spans) {
    spans.clear();
    return walk_array(s, i, [&](std::size_t index, std::size_t element) {
        return index < first ? read_element(s, element, index, spans) : skip_value(s, element);
    });
}

}  // namespace

std::optional<std::vector<PayloadSpan>> payload_spans(std::string_view body, std::size_t first_events) {
    std::vector<PayloadSpan> spans;
    bool found = false;  // whether the "events" that counts (the last one) is an array
    std::size_t i = skip_space(body, skip_bom(body));
    if (i < body.size() && body[i] == '[') {
        found = true;
        i = read_events(body, i, first_events, spans);
    } else if (i < body.size() && body[i] == '{') {
        i = walk_object(body, i, [&](std::string_view key, std::size_t value) {
            if (!key_is(key, "events")) return skip_value(body, value);
            found = value < body.size() && body[value] == '[';
            return found ? read_events(body, value, first_events, spans) : skip_value(body, value);
        });
    } else {
        return std::nullopt;
    }
    if (i == fail || !found || skip_space(body, i) != body.size()) return std::nullopt;
    return spans;
}

std::optional<std::string> unescape_json_string(std::string_view token) {
    if (token.size() < 2 || token.front() != '"' || token.back() != '"') return std::nullopt;
    const std::string_view raw = token.substr(1, token.size() - 2);
    std::string out;
    out.reserve(raw.size());
    for (std::size_t i = 0; i < raw.size();) {
        if (raw[i] == '"') return std::nullopt;  // the token ended early
        if (raw[i] != '\\') {
            out += raw[i++];
            continue;
        }
        i = decode_escape(raw, i, out);
        if (i == fail) return std::nullopt;
    }
    return out;
}

}  // namespace tributary
