#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace tributary {

/// Where a source's log has been read up to, in the source's own terms.
///
/// For `after-id` sources, the id of the last stored event (0 before the
/// first). For every other style a position: a text the style sends back
/// (the last key, a page token, a next-page URL, a timestamp watermark, a
/// page number or an offset; empty before the first request) and how many
/// records of the page at that position are already stored (`taken`: a page
/// read again, at the end of a stream, is known by it). The loader never
/// looks inside a cursor: it gets one from a claim, hands it to the fetcher,
/// and stores the next one with the batch (compare-and-set on the old one).
class Cursor {
public:
    /// Nothing read yet, for a source whose cursor is an event id.
    Cursor() = default;
    static Cursor at_id(std::int64_t id) { return Cursor(Value(id)); }
    static Cursor at(std::string position, std::int64_t taken = 0) {
        return Cursor(Value(Position{std::move(position), taken}));
    }

    bool is_id() const { return std::holds_alternative<std::int64_t>(value_); }
    /// The event id; throws std::logic_error for a position.
    std::int64_t id() const {
        if (!is_id()) throw std::logic_error("cursor holds a position, not an event id");
        return std::get<std::int64_t>(value_);
    }
    /// The position's text; throws std::logic_error for an event-id cursor.
    const std::string& position() const { return as_position().text; }
    /// Records of the page at the position already stored.
    std::int64_t taken() const { return as_position().taken; }

    /// For log lines and status (a position may be long: callers cut it).
    std::string to_string() const {
        if (is_id()) return std::to_string(id());
        const auto& p = as_position();
        return p.taken == 0 ? p.text : p.text + " (+" + std::to_string(p.taken) + ")";
    }

    friend bool operator==(const Cursor& a, const Cursor& b) { return a.value_ == b.value_; }
    friend bool operator!=(const Cursor& a, const Cursor& b) { return !(a == b); }

private:
    struct Position {
        std::string text;
        std::int64_t taken = 0;
        friend bool operator==(const Position& a, const Position& b) { return a.taken == b.taken && a.text == b.text; }
    };
    using Value = std::variant<std::int64_t, Position>;
    explicit Cursor(Value value) : value_(std::move(value)) {}
    const Position& as_position() const {
        if (is_id()) throw std::logic_error("cursor holds an event id, not a position");
        return std::get<Position>(value_);
    }
    Value value_{std::int64_t{0}};
};

/// A cursor's text (Cursor::to_string, or a position) as logs and output show it: a next-page URL
/// or token may be long, and a next link's query may echo a credential the source was given (an
/// API key as a query parameter), so it is shown up to its query, if it has one, and 80 bytes.
inline std::string shown_cursor_text(std::string text) {
    constexpr std::size_t kShown = 80;
    if (const auto query = text.find('?'); query != std::string::npos) text = text.substr(0, query) + "?...";
    if (text.size() > kShown) text = text.substr(0, kShown) + "...";
    return text;
}

}  // namespace tributary
