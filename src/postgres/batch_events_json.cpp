#include "batch_events_json.h"

#include <charconv>
#include <string>

#include "http/strict_json_reader.h"

namespace tributary::postgres {

namespace {

/// Deeper than any payload PostgreSQL accepts (its JSON parser stops at its
/// stack depth); the reader spends a byte per level, so a generous bound
/// costs nothing.
constexpr int kMaxDepth = 100000;

/// The members of an event object that the reader keeps.
enum class Member { other, seq, source, event_id, event_key, payload };

Member member_named(const JsonString& name) {
    // PostgreSQL prints these names as written in batch_json: no escapes.
    if (name.escaped) return Member::other;
    if (name.raw == "seq") return Member::seq;
    if (name.raw == "source") return Member::source;
    if (name.raw == "event_id") return Member::event_id;
    if (name.raw == "event_key") return Member::event_key;
    if (name.raw == "payload") return Member::payload;
    return Member::other;
}

constexpr unsigned bit(Member member) { return 1u << static_cast<unsigned>(member); }

/// The members every event must have (event_id may be missing or null).
constexpr unsigned kAllRequired =
    bit(Member::seq) | bit(Member::source) | bit(Member::event_key) | bit(Member::payload);

[[noreturn]] void malformed(const std::string& what) {
    throw MalformedBatchJson("consumer_next returned events that are not its JSON array: " + what);
}

std::int64_t integer_at(std::string_view text, JsonKind kind, const char* member) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (kind != JsonKind::integer || error != std::errc() || end != text.data() + text.size())
        malformed(std::string(member) + " is not a 64-bit integer: " + std::string(text.substr(0, 40)));
    return value;
}

std::string decoded(const JsonString* string, const char* member) {
    if (!string) malformed(std::string(member) + " is not a string");
    // Decoding never makes a string longer than its escaped form.
    auto value = decoded_json_string(*string, string->raw.size());
    if (!value) malformed(std::string(member) + " could not be decoded");
    return std::move(*value);
}

/// Depth 1 is the array, 2 an event object, 3 and deeper inside a member's
/// value (a payload's, in practice).
class BatchEventsVisitor : public JsonVisitor {
public:
    BatchEventsVisitor(std::string_view text, std::vector<LoggedEvent>& events) : text_(text), events_(events) {}

    void name(const JsonString& name) override {
        if (depth_ == 2) member_ = member_named(name);
    }

    void open(JsonKind kind, std::size_t at) override {
        ++depth_;
        if (depth_ == 1 && kind != JsonKind::array) malformed("the top is not an array");
        if (depth_ == 2) {
            if (kind != JsonKind::object) malformed("an element is not an object");
            events_.emplace_back();
            seen_ = 0;
        }
        if (depth_ == 3 && member_ == Member::payload) payload_begin_ = at;
    }

    void close(std::size_t end) override {
        if (depth_ == 3 && member_ == Member::payload) {
            events_.back().payload = cut(payload_begin_, end);
            seen_ |= bit(Member::payload);
        }
        if (depth_ == 2 && (seen_ & kAllRequired) != kAllRequired)
            malformed("an event lacks seq, source, event_key or payload");
        --depth_;
    }

    void scalar(JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string) override {
        if (depth_ == 0) malformed("the top is not an array");
        if (depth_ == 1) malformed("an element is not an object");
        if (depth_ != 2) return;
        LoggedEvent& event = events_.back();
        switch (member_) {
            case Member::seq: event.seq = integer_at(cut_view(begin, end), kind, "seq"); break;
            case Member::source: event.source = decoded(string, "source"); break;
            case Member::event_id:
                if (kind != JsonKind::null) event.event_id = integer_at(cut_view(begin, end), kind, "event_id");
                break;
            case Member::event_key: event.event_key = decoded(string, "event_key"); break;
            case Member::payload: event.payload = cut(begin, end); break;
            case Member::other: break;
        }
        seen_ |= bit(member_);
    }

private:
    std::string_view cut_view(std::size_t begin, std::size_t end) const { return text_.substr(begin, end - begin); }
    std::string cut(std::size_t begin, std::size_t end) const { return std::string(cut_view(begin, end)); }

    std::string_view text_;
    std::vector<LoggedEvent>& events_;
    int depth_ = 0;
    Member member_ = Member::other;
    unsigned seen_ = 0;
    std::size_t payload_begin_ = 0;
};

}  // namespace

std::vector<LoggedEvent> read_batch_events(std::string_view json) {
    std::vector<LoggedEvent> events;
    BatchEventsVisitor visitor(json, events);
    if (const auto error = read_strict_json(json, kMaxDepth, visitor))
        malformed(error->what + " at byte " + std::to_string(error->at));
    return events;
}

}  // namespace tributary::postgres
