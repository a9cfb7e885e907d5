#include "strict_json_reader.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include <spdlog/fmt/fmt.h>

namespace tributary {
namespace {

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

constexpr bool has_zero_byte(std::uint64_t word) { return ((word - kOnes) & ~word & kHighBits) != 0; }

// Whether any of 8 string bytes needs a closer look: a quote, a backslash, a
// control byte (< 0x20, invalid unescaped) or a non-ASCII byte (UTF-8 to
// check). Most payload text is none of these, so strings are walked 8 bytes
// at a time; this is most of the reader's speed.
constexpr bool plain_word(std::uint64_t word) {
    const std::uint64_t control = (word - kOnes * 0x20) & ~word & kHighBits;
    return (control | (word & kHighBits)) == 0 && !has_zero_byte(word ^ (kOnes * '"')) &&
           !has_zero_byte(word ^ (kOnes * '\\'));
}

constexpr bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// How a byte is named in a message: the text is hostile, the message stored.
std::string shown_byte(char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x21 && byte < 0x7f) return fmt::format("'{}'", c);
    return fmt::format("byte 0x{:02X}", byte);
}

class Reader {
public:
    Reader(std::string_view text, int max_depth, JsonVisitor& visitor)
        : text_(text),
          end_(text.size()),
          max_depth_(max_depth < 0 ? 0 : static_cast<std::size_t>(max_depth)),
          visitor_(visitor) {
        open_objects_.reserve(max_depth_);
    }

    std::optional<JsonSyntaxError> run() {
        if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
        if (!values()) return std::move(error_);
        return std::nullopt;
    }

private:
    bool fail(std::size_t at, std::string what, bool too_deep = false) {
        error_ = JsonSyntaxError{at, std::move(what), too_deep};
        return false;
    }
    bool fail_here(const char* expected) {
        if (pos_ >= end_) return fail(pos_, fmt::format("unexpected end of input; expected {}", expected));
        return fail(pos_, fmt::format("unexpected {}; expected {}", shown_byte(text_[pos_]), expected));
    }

    void skip_space() {
        while (pos_ < end_ && is_space(text_[pos_])) ++pos_;
    }

    // The whole text: a value, then one after another as the containers
    // around them go on, with no recursion.
    bool values() {
        for (;;) {
            if (!value()) return false;
            if (opened_) {  // a container with contents: its first value is next
                opened_ = false;
                continue;
            }
            // After a value: close what ends here, then find the next value.
            for (;;) {
                skip_space();
                if (open_objects_.empty()) {
                    if (pos_ == end_) return true;
                    return fail_here("the end of the text after the top-level value");
                }
                if (pos_ == end_) return fail_here(open_objects_.back() ? "',' or '}'" : "',' or ']'");
                const char c = text_[pos_];
                if (c == ',') {
                    ++pos_;
                    if (open_objects_.back() && !member_name()) return false;
                    break;
                }
                if (c == (open_objects_.back() ? '}' : ']')) {
                    ++pos_;
                    close();
                    continue;
                }
                return fail_here(open_objects_.back() ? "',' or '}' after an object member"
                                                      : "',' or ']' after an array element");
            }
        }
    }

    // One value; a container only opens, and its contents are the loop's,
    // which is what keeps depth off the call stack.
    bool value() {
        skip_space();
        if (pos_ == end_) return fail_here("a value");
        const std::size_t begin = pos_;
        switch (text_[pos_]) {
            case '{': return open(JsonKind::object);
            case '[': return open(JsonKind::array);
            case '"': {
                JsonString string;
                if (!read_string(string)) return false;
                visitor_.scalar(JsonKind::string, begin, pos_, &string);
                return true;
            }
            case 't': return literal("true", JsonKind::boolean);
            case 'f': return literal("false", JsonKind::boolean);
            case 'n': return literal("null", JsonKind::null);
            default: {
                bool integer = true;
                if (!read_number(integer)) return false;
                visitor_.scalar(integer ? JsonKind::integer : JsonKind::floating, begin, pos_, nullptr);
                return true;
            }
        }
    }

    bool open(JsonKind kind) {
        if (open_objects_.size() >= max_depth_)
            return fail(pos_, fmt::format("JSON nested deeper than {} levels (at byte {})", max_depth_, pos_), true);
        visitor_.open(kind, pos_);
        ++pos_;
        const bool object = kind == JsonKind::object;
        open_objects_.push_back(object);
        skip_space();
        if (pos_ < end_ && text_[pos_] == (object ? '}' : ']')) {
            ++pos_;
            close();
            return true;
        }
        opened_ = true;
        return !object || member_name();
    }

    void close() {
        open_objects_.pop_back();
        visitor_.close(pos_);
    }

    bool member_name() {
        skip_space();
        if (pos_ == end_ || text_[pos_] != '"') return fail_here("a member name (a string)");
        JsonString name;
        if (!read_string(name)) return false;
        skip_space();
        if (pos_ == end_ || text_[pos_] != ':') return fail_here("':' after a member name");
        ++pos_;
        visitor_.name(name);
        return true;
    }

    bool literal(const char* word, JsonKind kind) {
        const std::size_t size = std::strlen(word);
        if (text_.compare(pos_, size, word) != 0) return fail_here("a value");
        visitor_.scalar(kind, pos_, pos_ + size, nullptr);
        pos_ += size;
        return true;
    }

    bool digits() {
        if (pos_ == end_ || !is_digit(text_[pos_])) return fail_here("a digit");
        while (pos_ < end_ && is_digit(text_[pos_])) ++pos_;
        return true;
    }

    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, kept as text: any
    // length and magnitude is valid JSON (jsonb stores 1e309 and 30 digits).
    bool read_number(bool& integer) {
        if (text_[pos_] == '-') ++pos_;
        if (pos_ == end_ || !is_digit(text_[pos_])) return fail_here("a value");
        if (text_[pos_] == '0') ++pos_;
        else if (!digits()) return false;
        if (pos_ < end_ && text_[pos_] == '.') {
            ++pos_;
            integer = false;
            if (!digits()) return false;
        }
        if (pos_ < end_ && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            ++pos_;
            integer = false;
            if (pos_ < end_ && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
            if (!digits()) return false;
        }
        return true;
    }

    bool read_string(JsonString& out) {
        const std::size_t begin = ++pos_;  // past the opening quote
        for (;;) {
            while (end_ - pos_ >= 8) {
                std::uint64_t word;
                std::memcpy(&word, text_.data() + pos_, 8);
                if (!plain_word(word)) break;
                pos_ += 8;
            }
            if (pos_ == end_) return fail(pos_, "unexpected end of input in a string");
            const auto byte = static_cast<unsigned char>(text_[pos_]);
            if (byte == '"') {
                out.raw = text_.substr(begin, pos_ - begin);
                ++pos_;
                return true;
            }
            if (byte == '\\') {
                out.escaped = true;
                if (!escape(out)) return false;
            } else if (byte < 0x20) {
                return fail(pos_, fmt::format("control character U+{:04X} in a string (it must be escaped)", byte));
            } else if (byte >= 0x80) {
                if (!utf8_sequence()) return false;
            } else {
                ++pos_;
            }
        }
    }

    // \uXXXX at pos_ (the backslash); its code unit, or -1.
    long unicode_escape(std::size_t at) const {
        if (end_ - at < 6 || text_[at] != '\\' || text_[at + 1] != 'u') return -1;
        long unit = 0;
        for (std::size_t i = at + 2; i < at + 6; ++i) {
            const int digit = hex_value(text_[i]);
            if (digit < 0) return -1;
            unit = unit * 16 + digit;
        }
        return unit;
    }

    bool escape(JsonString& out) {
        if (end_ - pos_ < 2) return fail(end_, "unexpected end of input in a string");
        switch (text_[pos_ + 1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't': pos_ += 2; return true;
            case 'u': break;
            default: return fail(pos_, fmt::format("invalid escape \\{} in a string", shown_byte(text_[pos_ + 1])));
        }
        const long unit = unicode_escape(pos_);
        if (unit < 0) return fail(pos_, "invalid \\u escape in a string (four hexadecimal digits expected)");
        if (unit == 0) out.has_nul = true;
        if (unit >= 0xDC00 && unit <= 0xDFFF)
            return fail(pos_, fmt::format("lone low surrogate \\u{:04X} in a string", unit));
        if (unit >= 0xD800 && unit <= 0xDBFF) {
            const long low = unicode_escape(pos_ + 6);
            if (low < 0xDC00 || low > 0xDFFF)
                return fail(pos_, fmt::format("high surrogate \\u{:04X} not followed by a low surrogate", unit));
            pos_ += 12;
            return true;
        }
        pos_ += 6;
        return true;
    }

    // One UTF-8 sequence of 2 to 4 bytes, as Unicode's table 3-7 allows
    // (no overlong forms, no surrogates, nothing past U+10FFFF).
    bool utf8_sequence() {
        const auto at = [this](std::size_t i) { return static_cast<unsigned char>(text_[pos_ + i]); };
        const unsigned char lead = at(0);
        std::size_t size = 0;
        unsigned char low = 0x80, high = 0xBF;  // the second byte's range
        if (lead >= 0xC2 && lead <= 0xDF) {
            size = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            size = 3;
            if (lead == 0xE0) low = 0xA0;
            if (lead == 0xED) high = 0x9F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            size = 4;
            if (lead == 0xF0) low = 0x90;
            if (lead == 0xF4) high = 0x8F;
        } else {
            return fail(pos_, "invalid UTF-8 in a string");
        }
        if (end_ - pos_ < size) return fail(pos_, "invalid UTF-8 in a string (a sequence cut short)");
        if (at(1) < low || at(1) > high) return fail(pos_, "invalid UTF-8 in a string");
        for (std::size_t i = 2; i < size; ++i)
            if (at(i) < 0x80 || at(i) > 0xBF) return fail(pos_, "invalid UTF-8 in a string");
        pos_ += size;
        return true;
    }

    std::string_view text_;
    std::size_t pos_ = 0;
    const std::size_t end_;
    const std::size_t max_depth_;
    JsonVisitor& visitor_;
    std::vector<bool> open_objects_;  ///< per open container, innermost last: object (true) or array
    std::optional<JsonSyntaxError> error_;
    bool opened_ = false;  ///< the last value() opened a container with contents
};

void append_utf8(std::string& out, unsigned long code) {
    if (code < 0x80) {
        out += static_cast<char>(code);
    } else if (code < 0x800) {
        out += static_cast<char>(0xC0 | (code >> 6));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code >> 18));
        out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
    }
}

unsigned long hex4(std::string_view digits) {
    unsigned long value = 0;
    for (char c : digits) value = value * 16 + static_cast<unsigned long>(hex_value(c));
    return value;
}

}  // namespace

std::optional<JsonSyntaxError> read_strict_json(std::string_view text, int max_depth, JsonVisitor& visitor) {
    return Reader(text, max_depth, visitor).run();
}

std::optional<std::string> decoded_json_string(const JsonString& string, std::size_t max_bytes) {
    const std::string_view raw = string.raw;
    if (!string.escaped) {
        if (raw.size() > max_bytes) return std::nullopt;
        return std::string(raw);
    }
    std::string out;
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (out.size() > max_bytes) return std::nullopt;
        if (raw[i] != '\\') {
            out += raw[i];
            continue;
        }
        const char kind = raw[++i];
        switch (kind) {
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                unsigned long code = hex4(raw.substr(i + 1, 4));
                i += 4;
                if (code >= 0xD800 && code <= 0xDBFF) {  // the reader checked a low surrogate follows
                    code = 0x10000 + ((code - 0xD800) << 10) + (hex4(raw.substr(i + 3, 4)) - 0xDC00);
                    i += 6;
                }
                append_utf8(out, code);
                break;
            }
            default: out += kind; break;  // " \ /
        }
    }
    if (out.size() > max_bytes) return std::nullopt;
    return out;
}

}  // namespace tributary
