#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tributary::source_server {

// The name of a source, pre-rendered for fast JSON output.
struct SourceIdentity {
    explicit SourceIdentity(std::string source_name);
    std::string name;
    std::string name_json;  // the name as a JSON string literal, quotes included
    std::uint64_t seed;     // hash of the name, drives the filler text
};

// One event as stored: the id and when it was produced. Everything else is derived.
struct EventRef {
    std::int64_t id;
    std::int64_t created_us;
    // The style routes' updated_at (Unix ms): start + id ms, earlier for events produced
    // while the source was in fault mode `late`.
    std::int64_t updated_ms = 0;
};

// How a payload is rendered (fault modes use the non-normal ones).
enum class PayloadVariant {
    normal,
    nul_in_data,  // the "data" string contains \u0000
    malformed,    // invalid JSON inside the payload object
};

// Renders events. The payload text is a pure function of (source name, id, created_us,
// payload size), so nothing but creation times is ever stored:
//   {"source":NAME,"id":ID,"created_at_us":T,"data":"<filler>"}
// where the filler is cut from a fixed pseudo-random table so that the payload is about
// `payload_bytes` long.
class EventGenerator {
public:
    explicit EventGenerator(std::size_t payload_bytes);

    void append_payload(std::string& out, const SourceIdentity& source, EventRef event,
                        PayloadVariant variant = PayloadVariant::normal) const;
    // {"id":ID,"payload":{...}}
    void append_event(std::string& out, const SourceIdentity& source, EventRef event) const;
    // Comma-separated events (no brackets).
    void append_events(std::string& out, const SourceIdentity& source, const std::vector<EventRef>& events) const;
    // {"events":[...]}
    std::string batch_body(const SourceIdentity& source, const std::vector<EventRef>& events) const;
    // [...] (the /_truth shape)
    std::string array_body(const SourceIdentity& source, const std::vector<EventRef>& events) const;

    // Appends `n` filler characters ([A-Za-z0-9], JSON-safe) selected by `seed`.
    void append_filler(std::string& out, std::uint64_t seed, std::size_t n) const;
    // A view of filler text at least min(n, table size) long; for streaming big bodies.
    std::string_view filler_block(std::size_t n) const;

    // Filler text for event `id`'s text fields in the fixtures (a comment's body, a ticket's
    // subject): about half a payload long, fixed per (source, id).
    void append_text(std::string& out, const SourceIdentity& source, std::int64_t id) const;

    std::size_t approx_event_bytes() const { return payload_bytes_ + 40; }

private:
    std::size_t payload_bytes_;
    std::string table_;
};

void append_int(std::string& out, std::int64_t value);
// `text` as a JSON string literal, quotes included (invalid UTF-8 replaced).
std::string json_string(const std::string& text);

}  // namespace tributary::source_server
