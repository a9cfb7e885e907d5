#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace tributary {

/// Where a source's log has been read up to, in the source's own terms.
/// Today that is the id of the last stored event (an integer, 0 before the
/// first); the cursor styles of real APIs (an opaque record key, a page
/// token, a next-page URL, a timestamp watermark) are text. The loader never
/// looks inside a cursor: it gets one from a claim, hands it to the fetcher,
/// and stores the next one with the batch (compare-and-set on the old one).
class Cursor {
public:
    /// Nothing read yet, for a source whose cursor is an event id.
    Cursor() = default;
    static Cursor at_id(std::int64_t id) { return Cursor(Value(id)); }
    static Cursor text(std::string value) { return Cursor(Value(std::move(value))); }

    bool is_id() const { return std::holds_alternative<std::int64_t>(value_); }
    /// The event id; throws std::logic_error for a text cursor.
    std::int64_t id() const {
        if (!is_id()) throw std::logic_error("cursor holds text, not an event id");
        return std::get<std::int64_t>(value_);
    }
    /// The text; throws std::logic_error for an event-id cursor.
    const std::string& text() const {
        if (is_id()) throw std::logic_error("cursor holds an event id, not text");
        return std::get<std::string>(value_);
    }
    /// For log lines (a text cursor may be long: callers cut it).
    std::string to_string() const { return is_id() ? std::to_string(id()) : text(); }

    friend bool operator==(const Cursor& a, const Cursor& b) { return a.value_ == b.value_; }
    friend bool operator!=(const Cursor& a, const Cursor& b) { return !(a == b); }

private:
    using Value = std::variant<std::int64_t, std::string>;
    explicit Cursor(Value value) : value_(std::move(value)) {}
    Value value_{std::int64_t{0}};
};

}  // namespace tributary
