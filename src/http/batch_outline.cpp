#include "batch_outline.h"

#include <cstddef>

#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>

#include "event_check.h"
#include "json_error_text.h"

namespace tributary {
namespace {

using nlohmann::json;
using Status = FetchResult::Status;

// nlohmann's id for "number overflow": a number whose text is valid JSON
// but beyond the range of a double (1e400), which it cannot represent.
constexpr int number_overflow_error = 406;

enum class TopMember { other, events, remaining, head_id };
enum class EventMember { other, id, payload };

// Keys arrive decoded, so "ev\u0065nts" is "events" here, as in a document.
TopMember top_member(const std::string& key) {
    if (key == "events") return TopMember::events;
    if (key == "remaining") return TopMember::remaining;
    if (key == "head_id") return TopMember::head_id;
    return TopMember::other;
}

EventMember event_member(const std::string& key) {
    if (key == "id") return EventMember::id;
    if (key == "payload") return EventMember::payload;
    return EventMember::other;
}

// A hostile number may be megabytes of digits, and messages are stored.
std::string abbreviated(const std::string& token) {
    constexpr std::size_t shown = 40;
    if (token.size() <= shown) return printable_ascii(token);
    return fmt::format("{}... ({} characters)", printable_ascii(std::string_view(token).substr(0, shown)),
                       token.size());
}

// Follows the parser through the body with a few counters: how deep it is,
// and whether that is inside the events list, one of its elements, or the
// element's "id" or "payload". Each value is looked at as it arrives and
// nothing is kept of it but what BatchOutline holds.
//
// Depth counts the containers open around the parser. The elements of the
// events list are the values that arrive at `list_depth_` (while the list is
// open), their members those at `list_depth_ + 1`.
class OutlineHandler final : public nlohmann::json_sax<json> {
public:
    explicit OutlineHandler(BatchOutline& out) : out_(out) {}

    bool null() override { return other_scalar(JsonKind::null); }
    bool boolean(bool) override { return other_scalar(JsonKind::boolean); }
    bool number_integer(number_integer_t v) override {
        return scalar(JsonKind::integer, [v] { return read_id(v); });
    }
    bool number_unsigned(number_unsigned_t v) override {
        return scalar(JsonKind::integer, [v] { return read_id(v); });
    }
    bool number_float(number_float_t v, const string_t&) override {
        return scalar(JsonKind::floating, [v] { return read_id(v); });
    }
    bool string(string_t& text) override {
        other_scalar(JsonKind::string);
        if (in_payload()) note_nul(text, "a string value");
        return true;
    }
    bool binary(binary_t&) override { return true; }  // only binary formats (CBOR, ...) have these

    bool start_object(std::size_t) override { return open(JsonKind::object); }
    bool start_array(std::size_t) override { return open(JsonKind::array); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }

    bool key(string_t& name) override {
        if (depth_ == 1 && out_.top == JsonKind::object)
            top_member_ = top_member(name);
        else if (in_event_ && depth_ == list_depth_ + 1)
            event_member_ = event_member(name);
        else if (in_payload())
            note_nul(name, "a key");
        return true;
    }

    bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) override {
        if (e.id == number_overflow_error)
            reject(Status::failing, overflow_problem(abbreviated(token), position));
        else
            reject(Status::transient, "malformed JSON body: " + readable_json_error(e.what()));
        return false;  // the parser stops here either way
    }

private:
    // A value begins, scalar or container. `read` gives it as an id; it is
    // called only for a value that needs it, since it formats a message for
    // every value that is not one.
    template <typename ReadId>
    void value(JsonKind kind, const ReadId& read) {
        if (depth_ == 0) {
            out_.top = kind;
            if (kind == JsonKind::array) new_events(kind);
        } else if (depth_ == 1 && out_.top == JsonKind::object) {
            top_member_value(kind, read);
        } else if (list_depth_ != 0 && depth_ == list_depth_) {
            element(kind);
        } else if (in_event_ && depth_ == list_depth_ + 1) {
            event_member_value(read);
        }
    }

    template <typename ReadId>
    bool scalar(JsonKind kind, const ReadId& read) {
        value(kind, read);
        return true;
    }

    bool other_scalar(JsonKind kind) {
        return scalar(kind, [kind] { return read_id(kind); });
    }

    bool open(JsonKind kind) {
        other_scalar(kind);
        ++depth_;
        return true;
    }

    bool close() {
        --depth_;
        if (in_event_ && depth_ == list_depth_) {
            in_event_ = false;
            finish_event(event_);
        } else if (list_depth_ != 0 && depth_ + 1 == list_depth_) {
            list_depth_ = 0;  // the list itself closed
        }
        return true;
    }

    // The top-level array, or an "events" member: what an earlier "events"
    // member gave is dropped, since the last one counts. When it is a list,
    // its elements are one level further in.
    void new_events(JsonKind kind) {
        list_depth_ = kind == JsonKind::array ? depth_ + 1 : 0;
        out_.ids.clear();
        out_.event_problem.reset();
        count_ = 0;
    }

    template <typename ReadId>
    void top_member_value(JsonKind kind, const ReadId& read) {
        switch (top_member_) {
            case TopMember::events:
                out_.events = kind;
                new_events(kind);
                break;
            case TopMember::remaining: out_.remaining = as_int64(kind, read); break;
            case TopMember::head_id: out_.head_id = as_int64(kind, read); break;
            case TopMember::other: break;
        }
    }

    template <typename ReadId>
    static std::optional<std::int64_t> as_int64(JsonKind kind, const ReadId& read) {
        if (kind != JsonKind::integer) return std::nullopt;
        const IdReading reading = read();
        if (!reading.problem.empty()) return std::nullopt;
        return reading.value;
    }

    void element(JsonKind kind) {
        const std::size_t index = count_++;
        if (kind != JsonKind::object) {
            finish_event(EventFields{index, kind, {}, false, nullptr});
            return;
        }
        in_event_ = true;
        event_ = EventFields{index, kind, {}, false, nullptr};
        event_member_ = EventMember::other;
    }

    template <typename ReadId>
    void event_member_value(const ReadId& read) {
        switch (event_member_) {
            case EventMember::id: event_.id = read(); break;
            case EventMember::payload:
                // A repeated "payload" replaces the earlier one, U+0000 and all.
                event_.has_payload = true;
                event_.payload_nul = nullptr;
                break;
            case EventMember::other: break;
        }
    }

    // Only the first problem is reported, so after one the ids are not kept.
    void finish_event(const EventFields& event) {
        if (out_.event_problem) return;
        if (auto problem = event_problem(event))
            out_.event_problem = std::move(problem);
        else
            out_.ids.push_back(event.id->value);
    }

    // Whether the value or key now arriving is within the current event's
    // payload: while an element is open, whatever arrives belongs to the
    // member being read, except keys at the element's own level, which key()
    // takes as member names before asking.
    bool in_payload() const { return in_event_ && event_member_ == EventMember::payload; }

    void note_nul(const std::string& text, const char* where) {
        if (event_.payload_nul == nullptr && text.find('\0') != std::string::npos) event_.payload_nul = where;
    }

    void reject(Status status, std::string why) { out_.unreadable = BatchOutline::Rejection{status, std::move(why)}; }

    // The parser stops at such a number, so whatever follows is never seen.
    // Names the event the number is in, when there is one.
    std::string overflow_problem(const std::string& number, std::size_t position) const {
        const auto beyond = [](const std::string& detail) {
            return fmt::format("a number beyond the range of a double ({}), which cannot be validated", detail);
        };
        if (in_event_ && depth_ == list_depth_ + 1 && event_member_ == EventMember::id)
            return fmt::format("event #{}: id {} is out of the 64-bit signed integer range", event_.index, number);
        if (in_payload()) return fmt::format("{}: payload has {}", event_label(event_), beyond(number));
        if (in_event_) return fmt::format("{} has {}", event_label(event_), beyond(number));
        if (list_depth_ != 0 && depth_ >= list_depth_) {
            // The number is an element itself, or inside one that is no object.
            const std::size_t index = depth_ == list_depth_ ? count_ : count_ - 1;
            return fmt::format("event #{} has {}", index, beyond(number));
        }
        return "body has " + beyond(fmt::format("{}, near byte {}", number, position));
    }

    BatchOutline& out_;
    std::size_t depth_ = 0;
    std::size_t list_depth_ = 0;  // 0 while no events list is open
    std::size_t count_ = 0;       // elements of the events list so far
    bool in_event_ = false;       // an element that is an object is open
    EventFields event_;
    TopMember top_member_ = TopMember::other;
    EventMember event_member_ = EventMember::other;
};

}  // namespace

BatchOutline outline_batch(std::string_view body) {
    BatchOutline outline;
    OutlineHandler handler(outline);
    json::sax_parse(body.begin(), body.end(), &handler);
    return outline;
}

}  // namespace tributary
