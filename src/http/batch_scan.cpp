#include "batch_scan.h"

#include <limits>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "batch_layout.h"
#include "core/batch_rules.h"

namespace tributary {
namespace {

/// What a value is to the loader, by where it sits.
enum class Role : std::uint8_t {
    other,     ///< validated, otherwise ignored
    envelope,  ///< the top-level object
    records,   ///< the list of events
    record,    ///< one event (an object)
    payload,   ///< an event's payload, or a value within it
};

// A hostile number or name may be megabytes long, and messages are stored:
// short, and printable ASCII only.
std::string shown(std::string_view text) {
    constexpr std::size_t kShown = 40;
    std::string out(text.substr(0, kShown));
    for (char& c : out)
        if (c < 0x20 || c > 0x7e) c = '?';
    if (text.size() > kShown) out += fmt::format("... ({} characters)", text.size());
    return out;
}

// An integer as JSON writes it (-?digits, already checked), or nothing
// when it lies outside int64.
std::optional<std::int64_t> int64_of(std::string_view text) {
    const bool negative = !text.empty() && text.front() == '-';
    if (negative) text.remove_prefix(1);
    const std::uint64_t limit =
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
    std::uint64_t value = 0;
    for (const char c : text) {
        const auto digit = static_cast<std::uint64_t>(c - '0');
        if (value > (limit - digit) / 10) return std::nullopt;
        value = value * 10 + digit;
    }
    if (!negative) return static_cast<std::int64_t>(value);
    return value == limit ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(value);
}

/// One event as read so far.
struct EventFields {
    std::size_t index = 0;
    unsigned seen = 0;  ///< bits of the fields met, by BatchField
    std::optional<std::int64_t> id;
    std::string id_problem;           ///< why the "id" member is no id
    const char* duplicate = nullptr;  ///< the first field met twice
    bool has_payload = false;
    std::size_t payload_begin = 0;
    std::size_t payload_end = 0;
    const char* payload_nul = nullptr;  ///< where the payload first has U+0000
};

constexpr unsigned bit(BatchField field) { return 1u << static_cast<unsigned>(field); }

class BatchVisitor final : public JsonVisitor {
public:
    BatchVisitor(std::string_view body, ScannedBatch& out, std::int64_t after_id, std::size_t keep)
        : body_(body), out_(out), after_id_(after_id), previous_id_(after_id), keep_(keep) {}

    void name(const JsonString& name) override {
        member_ = BatchField::none;
        switch (roles_.empty() ? Role::other : roles_.back()) {
            case Role::envelope: member_ = envelope_member(name); break;
            case Role::record: member_ = record_member(name); break;
            case Role::payload:
                if (name.has_nul) payload_nul("a key");
                break;
            default: break;
        }
    }

    void open(JsonKind kind, std::size_t at) override { roles_.push_back(place(kind, at, at)); }

    void close(std::size_t end) override {
        const Role role = roles_.back();
        roles_.pop_back();
        if (role == Role::record) finish_event();
        else if (role == Role::payload && !roles_.empty() && roles_.back() == Role::record)
            event_.payload_end = end;  // the payload itself, not a value inside it
    }

    void scalar(JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string) override {
        if (place(kind, begin, end) == Role::payload && string != nullptr && string->has_nul)
            payload_nul("a string value");
    }

private:
    // A value begins: note what the loader needs of it, and say what it is.
    // `end` is known for scalars only.
    Role place(JsonKind kind, std::size_t begin, std::size_t end) {
        if (roles_.empty()) {
            out_.top = kind;
            return kind == JsonKind::object ? Role::envelope : kind == JsonKind::array ? Role::records : Role::other;
        }
        const BatchField member = std::exchange(member_, BatchField::none);
        switch (roles_.back()) {
            case Role::envelope: return envelope_value(member, kind, begin, end);
            case Role::records: return element(kind);
            case Role::record: return event_value(member, kind, begin, end);
            case Role::payload: return Role::payload;
            case Role::other: break;
        }
        return Role::other;
    }

    Role envelope_value(BatchField member, JsonKind kind, std::size_t begin, std::size_t end) {
        switch (member) {
            case BatchField::records: out_.records = kind; return kind == JsonKind::array ? Role::records : Role::other;
            case BatchField::remaining: out_.remaining = backlog_number(kind, begin, end); break;
            case BatchField::head_id: out_.head_id = backlog_number(kind, begin, end); break;
            default: break;
        }
        return Role::other;
    }

    std::optional<std::int64_t> backlog_number(JsonKind kind, std::size_t begin, std::size_t end) const {
        if (kind != JsonKind::integer) return std::nullopt;
        return int64_of(body_.substr(begin, end - begin));
    }

    Role element(JsonKind kind) {
        const std::size_t index = out_.count++;
        if (kind != JsonKind::object) {
            event_problem(
                fmt::format("event #{} is {}, expected an object with \"id\" and \"payload\"", index, describe(kind)));
            return Role::other;
        }
        event_ = EventFields{};
        event_.index = index;
        return Role::record;
    }

    Role event_value(BatchField member, JsonKind kind, std::size_t begin, std::size_t end) {
        if (member == BatchField::id) {
            read_id(kind, body_.substr(begin, end - begin));
        } else if (member == BatchField::payload) {
            event_.has_payload = true;
            event_.payload_begin = begin;
            event_.payload_end = end;
            return Role::payload;
        }
        return Role::other;
    }

    void read_id(JsonKind kind, std::string_view text) {
        if (kind == JsonKind::floating) {
            event_.id_problem = fmt::format("id is a floating-point number ({}), expected an integer", shown(text));
        } else if (kind != JsonKind::integer) {
            event_.id_problem = fmt::format("id is {}, expected an integer", describe(kind));
        } else if (const auto id = int64_of(text)) {
            event_.id = id;
        } else {
            event_.id_problem = fmt::format("id {} is out of the 64-bit signed integer range", shown(text));
        }
    }

    // A name is compared decoded ("ev\u0065nts" is "events"), as a JSON
    // reader would; a name that appears twice is ambiguous, and an
    // exactly-once loader does not guess which one the source meant.
    BatchField envelope_member(const JsonString& name) {
        const BatchField field = field_of(name, envelope_field);
        if (field == BatchField::none) return field;
        if ((envelope_seen_ & bit(field)) != 0) {
            if (!out_.envelope_problem)
                out_.envelope_problem =
                    fmt::format("duplicate member \"{}\" in the top-level object", field_name(field));
            return BatchField::none;
        }
        envelope_seen_ |= bit(field);
        return field;
    }

    BatchField record_member(const JsonString& name) {
        const BatchField field = field_of(name, record_field);
        if (field == BatchField::none) return field;
        if ((event_.seen & bit(field)) != 0) {
            if (event_.duplicate == nullptr) event_.duplicate = field_name(field);
            return BatchField::none;
        }
        event_.seen |= bit(field);
        return field;
    }

    template <typename Lookup>
    static BatchField field_of(const JsonString& name, Lookup lookup) {
        if (!name.escaped) return lookup(name.raw);
        const auto decoded = decoded_json_string(name, kLongestFieldName);
        return decoded ? lookup(*decoded) : BatchField::none;
    }

    void payload_nul(const char* where) {
        if (event_.payload_nul == nullptr) event_.payload_nul = where;
    }

    std::string event_label() const {
        if (event_.id && event_.id_problem.empty()) return fmt::format("event #{} (id {})", event_.index, *event_.id);
        return fmt::format("event #{}", event_.index);
    }

    std::optional<std::string> problem_of_event() const {
        const std::size_t i = event_.index;
        if (event_.duplicate) return fmt::format("event #{}: duplicate member \"{}\"", i, event_.duplicate);
        if (!event_.id && event_.id_problem.empty()) return fmt::format("event #{}: id is missing", i);
        if (!event_.id_problem.empty()) return fmt::format("event #{}: {}", i, event_.id_problem);
        if (!event_.has_payload) return fmt::format("{}: payload is missing", event_label());
        if (event_.payload_nul)
            return fmt::format("{}: payload has U+0000 in {}, which PostgreSQL jsonb cannot store", event_label(),
                               event_.payload_nul);
        return std::nullopt;
    }

    void event_problem(std::string why) {
        if (!out_.event_problem) out_.event_problem = std::move(why);
    }

    // Only the first problem is reported, so after one nothing is kept.
    void finish_event() {
        if (out_.event_problem) return;
        if (auto problem = problem_of_event()) {
            event_problem(std::move(*problem));
            out_.kept.clear();
            return;
        }
        const std::int64_t id = *event_.id;
        if (!out_.order_problem) out_.order_problem = id_violation(event_.index, id, previous_id_, after_id_);
        previous_id_ = id;
        if (out_.kept.size() < keep_) out_.kept.push_back({id, event_.payload_begin, event_.payload_end});
    }

    std::string_view body_;
    ScannedBatch& out_;
    const std::int64_t after_id_;
    std::int64_t previous_id_;
    const std::size_t keep_;
    std::vector<Role> roles_;               ///< per open container, innermost last
    BatchField member_ = BatchField::none;  ///< the member whose value comes next
    unsigned envelope_seen_ = 0;
    EventFields event_;  ///< the event open now (events do not nest)
};

}  // namespace

ScannedBatch scan_batch(std::string_view body, std::int64_t after_id, std::size_t keep, int max_depth) {
    ScannedBatch out;
    BatchVisitor visitor(body, out, after_id, keep);
    out.syntax = read_strict_json(body, max_depth, visitor);
    return out;
}

}  // namespace tributary
