#include "pushed_body.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <spdlog/fmt/fmt.h>
#include <nlohmann/json.hpp>

#include "core/batch_rules.h"
#include "http/fetch_limits.h"
#include "http/json_key.h"
#include "http/json_pointer.h"
#include "http/page_paths.h"
#include "http/strict_json_reader.h"
#include "jsonb_number.h"

namespace tributary::webhook {
namespace {

// The same nesting a pulled body may have: a pushed event is the same data.
constexpr int kMaxDepth = FetchLimits{}.max_depth;

/// The source's key pointers, ready to follow while reading.
struct KeyPaths {
    std::vector<std::vector<std::string>> tokens;                  ///< per pointer, decoded
    std::vector<std::vector<std::optional<std::size_t>>> indexes;  ///< per pointer, the element each token names
    std::vector<std::string> names;                                ///< per pointer, as messages name it
    std::size_t longest_token = 0;
    std::uint32_t whole = 0;  ///< bit i: pointer i is "", the event itself
};

std::optional<KeyPaths> compile_key_paths(const std::vector<std::string>& pointers, std::string& why) {
    if (pointers.empty()) {
        why = "the source has no key pointer";
        return std::nullopt;
    }
    if (pointers.size() > kMaxKeyParts) {
        why = fmt::format("a key has at most {} parts, not {}", kMaxKeyParts, pointers.size());
        return std::nullopt;
    }
    KeyPaths paths;
    for (std::size_t i = 0; i < pointers.size(); ++i) {
        auto tokens = json_pointer_tokens(pointers[i]);
        if (!tokens) {
            why = fmt::format("the key pointer '{}' is no JSON pointer", shown_json_text(pointers[i]));
            return std::nullopt;
        }
        std::vector<std::optional<std::size_t>> indexes;
        for (const auto& token : *tokens) {
            indexes.push_back(json_pointer_index(token));
            paths.longest_token = std::max(paths.longest_token, token.size());
        }
        if (tokens->empty()) paths.whole |= std::uint32_t{1} << i;
        paths.tokens.push_back(std::move(*tokens));
        paths.indexes.push_back(std::move(indexes));
        paths.names.push_back("key " + (pointers[i].empty() ? std::string("\"\"") : pointers[i]));
    }
    return paths;
}

/// One open object or array within an event.
struct Frame {
    std::size_t depth = 0;     ///< key pointer tokens matched to get here
    std::uint32_t live = 0;    ///< bit i: key pointer i goes on inside
    std::uint32_t seen = 0;    ///< an object: bit i: a member on pointer i's way met already
    std::size_t elements = 0;  ///< an array: elements so far
    bool is_array = false;
};

/// Reads one JSON text (the body, or one NDJSON line) into events appended
/// to `out`: with `array_is_events`, a top-level array's elements; else the
/// whole value. Keys from `keys`, or left empty (keyed by the header).
class EventReader final : public JsonVisitor {
public:
    EventReader(std::string_view text, bool array_is_events, const KeyPaths* keys, PushedBody& out)
        : text_(text), array_is_events_(array_is_events), keys_(keys), out_(out) {
        if (keys_ != nullptr) parts_.resize(keys_->tokens.size());
    }

    void name(const JsonString& name) override {
        if (!in_event_) return;
        if (name.has_nul) problem("a member name holds U+0000, which PostgreSQL jsonb cannot store");
        pending_ = 0;
        Frame& frame = frames_.back();
        if (frame.live == 0) return;
        std::optional<std::string> decoded;
        if (name.escaped) {
            decoded = decoded_json_string(name, keys_->longest_token);
            if (!decoded) return;
        }
        const std::string_view text = decoded ? std::string_view(*decoded) : name.raw;
        std::uint32_t matched = 0;
        for (std::size_t i = 0; i < keys_->tokens.size(); ++i)
            if ((frame.live & bit(i)) != 0 && keys_->tokens[i][frame.depth] == text) matched |= bit(i);
        if ((matched & frame.seen) != 0) {
            problem(fmt::format("member \"{}\" appears twice on the way of a key pointer", shown_json_text(text)));
            return;
        }
        frame.seen |= matched;
        pending_ = matched;
    }

    void open(JsonKind kind, std::size_t at) override {
        if (open_ == 0 && kind == JsonKind::array && array_is_events_) {
            event_depth_ = 1;
        } else if (open_ >= event_depth_) {
            Frame frame;
            frame.is_array = kind == JsonKind::array;
            const std::uint32_t here = value(kind, at, at, nullptr, frame.depth);
            frame.live = here;
            frames_.push_back(frame);
        }
        ++open_;
    }

    void close(std::size_t end) override {
        --open_;
        if (open_ < event_depth_) return;  // the array of events
        frames_.pop_back();
        if (open_ == event_depth_) finish_event(end);
    }

    void scalar(JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string) override {
        std::size_t depth = 0;
        value(kind, begin, end, string, depth);
        if (string != nullptr && string->has_nul) problem("a string holds U+0000, which PostgreSQL jsonb cannot store");
        if ((kind == JsonKind::integer || kind == JsonKind::floating) &&
            !jsonb_takes_number(text_.substr(begin, end - begin)))
            problem(fmt::format("the number {} is beyond what PostgreSQL jsonb stores",
                                shown_json_text(text_.substr(begin, end - begin))));
        if (open_ == event_depth_) finish_event(end);
    }

private:
    static constexpr std::uint32_t bit(std::size_t i) { return std::uint32_t{1} << i; }

    // A value begins at `begin`: an event, or a value within one. Notes the
    // key parts it is, and returns the pointers that go on inside it (with
    // `depth`, the tokens matched to get here).
    std::uint32_t value(JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string,
                        std::size_t& depth) {
        std::uint32_t here = 0;
        if (open_ == event_depth_) {
            start_event(begin);
            here = keys_ == nullptr ? 0 : (keys_->whole | on_the_way());
            depth = 0;
        } else {
            Frame& parent = frames_.back();
            here = parent.is_array ? element(parent) : std::exchange(pending_, 0);
            depth = parent.depth + 1;
        }
        if (here == 0) return 0;
        std::uint32_t going_on = 0;
        for (std::size_t i = 0; i < parts_.size(); ++i) {
            if ((here & bit(i)) == 0) continue;
            if (keys_->tokens[i].size() == depth) {
                JsonMet& part = parts_[i];
                part.kind = kind;
                part.text = text_.substr(begin, end - begin);
                if (string != nullptr) part.string = *string;
            } else {
                going_on |= bit(i);
            }
        }
        return going_on;
    }

    // The pointers that lead into an event (all but "").
    std::uint32_t on_the_way() const {
        std::uint32_t all = 0;
        for (std::size_t i = 0; i < keys_->tokens.size(); ++i)
            if (!keys_->tokens[i].empty()) all |= bit(i);
        return all;
    }

    std::uint32_t element(Frame& parent) {
        const std::size_t at = parent.elements++;
        std::uint32_t matched = 0;
        for (std::size_t i = 0; i < parts_.size(); ++i)
            if ((parent.live & bit(i)) != 0 && keys_->indexes[i][parent.depth] == at) matched |= bit(i);
        return matched;
    }

    void start_event(std::size_t begin) {
        in_event_ = true;
        begin_ = begin;
        problem_.clear();
        pending_ = 0;
        for (auto& part : parts_) part = JsonMet{};
    }

    void problem(std::string why) {
        if (problem_.empty()) problem_ = std::move(why);
    }

    void finish_event(std::size_t end) {
        in_event_ = false;
        if (out_.refusal) return;  // only the first problem is told; nothing is kept after it
        const std::size_t index = out_.events.size();
        PushedEvent event;
        if (problem_.empty() && keys_ != nullptr) {
            if (auto why = key_text(parts_, keys_->names, event.key)) problem_ = std::move(*why);
        }
        if (!problem_.empty()) {
            out_.refusal = fmt::format("event #{}: {}", index, problem_);
            out_.events.clear();
            return;
        }
        event.payload = std::string(text_.substr(begin_, end - begin_));
        out_.events.push_back(std::move(event));
    }

    std::string_view text_;
    const bool array_is_events_;
    const KeyPaths* keys_;
    PushedBody& out_;
    std::size_t open_ = 0;         ///< containers open, the array of events included
    std::size_t event_depth_ = 0;  ///< 1 when the events are a top-level array's elements
    std::vector<Frame> frames_;    ///< the containers open within the event
    bool in_event_ = false;
    std::size_t begin_ = 0;
    std::uint32_t pending_ = 0;  ///< the pointers the next member's value lies on
    std::vector<JsonMet> parts_;
    std::string problem_;  ///< the event's first problem
};

std::string syntax_message(const JsonSyntaxError& error) {
    if (error.too_deep) return error.what;
    return fmt::format("{} at byte {}", error.what, error.at);
}

bool is_ndjson_type(std::string_view content_type) {
    std::string media(content_type.substr(0, content_type.find(';')));
    media.erase(std::remove_if(media.begin(), media.end(), [](unsigned char c) { return std::isspace(c); }),
                media.end());
    std::transform(media.begin(), media.end(), media.begin(), [](unsigned char c) { return std::tolower(c); });
    return media == "application/x-ndjson" || media == "application/jsonl";
}

PushedBody refused(std::string why) {
    PushedBody out;
    out.refusal = std::move(why);
    return out;
}

/// NDJSON: each non-empty line ('\n' ends a line, a '\r' before it is
/// dropped) one event. On a syntax error returns it, with the line's number
/// and whether it was the first non-empty line.
std::optional<JsonSyntaxError> read_lines(std::string_view body, const KeyPaths* keys, PushedBody& out,
                                          std::size_t& error_line, bool& error_on_first_line) {
    std::size_t number = 0;
    bool first = true;
    for (std::size_t begin = 0; begin <= body.size();) {
        std::size_t end = body.find('\n', begin);
        if (end == std::string_view::npos) end = body.size();
        std::string_view line = body.substr(begin, end - begin);
        begin = end + 1;
        ++number;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        EventReader reader(line, false, keys, out);
        if (auto error = read_strict_json(line, kMaxDepth, reader)) {
            error_line = number;
            error_on_first_line = first;
            return error;
        }
        if (out.refusal) return std::nullopt;
        first = false;
    }
    return std::nullopt;
}

/// Keys `events` by the key header's `value`, or says why it cannot.
std::optional<std::string> header_keys(const std::string& header, const std::string& value,
                                       std::vector<PushedEvent>& events) {
    if (events.empty()) return std::nullopt;
    if (value.empty()) return fmt::format("the {} header is empty", header);
    const std::string longest = events.size() == 1 ? value : value + "#" + std::to_string(events.size() - 1);
    if (longest.size() > kMaxKeyBytes)
        return fmt::format("the {} header makes a key of {} bytes, more than the {} a key may have", header,
                           longest.size(), kMaxKeyBytes);
    if (value.find('\0') != std::string::npos) return fmt::format("the {} header holds NUL", header);
    try {
        (void)nlohmann::json(value).dump();  // a key is text: PostgreSQL takes valid UTF-8 only
    } catch (const nlohmann::json::type_error&) {
        return fmt::format("the {} header is not valid UTF-8", header);
    }
    if (events.size() == 1) {
        events.front().key = value;
        return std::nullopt;
    }
    for (std::size_t i = 0; i < events.size(); ++i) events[i].key = value + "#" + std::to_string(i);
    return std::nullopt;
}

}  // namespace

std::optional<std::string> key_pointers_problem(const PushedSource& source) {
    std::string why;
    if (!compile_key_paths(source.key, why)) return why;
    return std::nullopt;
}

PushedBody read_pushed_body(std::string_view body, std::string_view content_type, const PushedSource& source,
                            const std::optional<std::string>& key_header_value) {
    std::optional<KeyPaths> paths;
    if (!key_header_value) {
        std::string why;
        paths = compile_key_paths(source.key, why);
        if (!paths) return refused("the source's keys cannot be read: " + why);
    }
    const KeyPaths* keys = paths ? &*paths : nullptr;

    PushedBody out;
    std::optional<JsonSyntaxError> single;
    if (!is_ndjson_type(content_type)) {
        EventReader reader(body, true, keys, out);
        single = read_strict_json(body, kMaxDepth, reader);
        if (!single) {
            if (!out.refusal && key_header_value)
                out.refusal = header_keys(source.key_header, *key_header_value, out.events);
            if (out.refusal) out.events.clear();
            return out;
        }
        out = PushedBody{};
    }
    // NDJSON, said so or found so: a body that is no one JSON value may be one per line.
    std::size_t line = 0;
    bool first_line = false;
    if (auto error = read_lines(body, keys, out, line, first_line)) {
        // Not NDJSON from its first line on: the body was meant as one value.
        if (single && first_line) return refused("the body is not JSON: " + syntax_message(*single));
        return refused(fmt::format("line {} is not JSON: {}", line, syntax_message(*error)));
    }
    if (single && out.events.empty() && !out.refusal)
        return refused("the body is not JSON: " + syntax_message(*single));
    if (!out.refusal && key_header_value) out.refusal = header_keys(source.key_header, *key_header_value, out.events);
    if (out.refusal) out.events.clear();
    return out;
}

}  // namespace tributary::webhook
