#include "page_scan.h"

#include <limits>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "core/batch_rules.h"
#include "json_key.h"

namespace tributary {
namespace {

/// What a container is to the loader, besides the path it lies on.
enum class Role : std::uint8_t {
    plain,    ///< validated; what the paths lead to inside is read
    records,  ///< the array of records: each element is a record
    record,   ///< one record (an object)
};

/// One open object or array.
struct Frame {
    const PathNode* node = nullptr;  ///< on a path with more below: its place in the tree
    std::uint32_t seen = 0;          ///< an object on a path: bit per child met
    std::uint32_t elements = 0;      ///< an array on a path: elements so far (saturating)
    Role role = Role::plain;
    bool is_array = false;
    bool in_payload = false;    ///< the payload or a value within it
    bool payload_root = false;  ///< the payload itself
    /// Off every path and no records: nothing inside matters but U+0000 in
    /// a payload. Most of a body is such, so it takes the short way.
    bool quiet() const { return node == nullptr && role == Role::plain; }
};

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

/// A scalar or container met at a key's or a time's place in a record.
using Met = JsonMet;

/// One record as read so far.
struct RecordFields {
    std::size_t index = 0;
    std::string duplicate;  ///< the first member on a path met twice, as messages name it
    std::vector<Met> key_parts;
    Met time;
    bool has_payload = false;
    std::size_t payload_begin = 0;
    std::size_t payload_end = 0;
    const char* payload_nul = nullptr;  ///< where the payload first has U+0000
};

/// A record's key, once read: an id, or the text of a key, or why neither.
struct RecordKey {
    std::int64_t id = 0;
    std::string text;
};

class PageVisitor final : public JsonVisitor {
public:
    PageVisitor(std::string_view body, const PagePaths& paths, ScannedPage& out, std::int64_t after_id,
                std::size_t keep)
        : body_(body), paths_(paths), out_(out), after_id_(after_id), previous_id_(after_id), keep_(keep) {
        record_.key_parts.resize(paths.key_parts);
    }

    void name(const JsonString& name) override {
        pending_ = nullptr;
        Frame& frame = frames_.back();
        if (frame.node != nullptr && quiet_depth_ == 0) pending_ = member(frame, name);
        if (frame.in_payload && name.has_nul) payload_nul("a key");
    }

    void open(JsonKind kind, std::size_t at) override {
        if (quiet_depth_ > 0 || (!frames_.empty() && frames_.back().quiet())) {
            ++quiet_depth_;
            return;
        }
        frames_.push_back(place(kind, at, at, nullptr));
    }

    void close(std::size_t end) override {
        if (quiet_depth_ > 0) {
            --quiet_depth_;
            return;
        }
        const Frame& frame = frames_.back();
        if (frame.payload_root) record_.payload_end = end;
        const bool record = frame.role == Role::record;
        frames_.pop_back();
        if (record) finish_record();
    }

    void scalar(JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string) override {
        const bool quiet = quiet_depth_ > 0 || (!frames_.empty() && frames_.back().quiet());
        const bool in_payload = quiet ? frames_.back().in_payload : place(kind, begin, end, string).in_payload;
        if (in_payload && string != nullptr && string->has_nul) payload_nul("a string value");
    }

private:
    // A value begins: note what the loader needs of it, and say what it is
    // as a container. `end` is known for scalars only.
    Frame place(JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string) {
        Frame frame;
        const PathNode* node = nullptr;
        if (frames_.empty()) {
            out_.top = kind;
            node = &paths_.document;
        } else {
            const Frame& parent = frames_.back();
            const PathNode* member = std::exchange(pending_, nullptr);
            frame.in_payload = parent.in_payload;
            if (parent.role == Role::records) {
                node = element(kind);
                if (node != nullptr) frame.role = Role::record;
            } else if (parent.node != nullptr) {
                node = parent.is_array ? element_on_path(frames_.back()) : member;
            }
        }
        frame.is_array = kind == JsonKind::array;
        if (node == nullptr) return frame;
        if (node->targets != 0 || node->key_parts != 0) read(*node, kind, begin, end, string, frame);
        if (!node->children.empty()) frame.node = node;
        return frame;
    }

    static const PathNode* element_on_path(Frame& array) {
        std::size_t position = 0;
        const std::uint32_t at = array.elements;
        if (at != std::numeric_limits<std::uint32_t>::max()) ++array.elements;
        return array.node->element(at, position);
    }

    void read(const PathNode& node, JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string,
              Frame& frame) {
        const unsigned targets = node.targets;
        if ((targets & PathNode::kRecordsIfArray) != 0 && kind == JsonKind::array) {
            out_.records_at_top = true;
            frame.role = Role::records;
        }
        if ((targets & PathNode::kRecords) != 0) {
            out_.records = kind;
            if (frames_.empty()) out_.records_at_top = true;
            if (kind == JsonKind::array) frame.role = Role::records;
        }
        if ((targets & PathNode::kNext) != 0) out_.next = found(kind, begin, end, string);
        if ((targets & PathNode::kHasMore) != 0) out_.has_more = found(kind, begin, end, string);
        if ((targets & PathNode::kEndOfStream) != 0) out_.end_of_stream = found(kind, begin, end, string);
        if ((targets & PathNode::kRemaining) != 0) out_.remaining = backlog_number(kind, begin, end);
        if ((targets & PathNode::kHeadId) != 0) out_.head_id = backlog_number(kind, begin, end);
        if ((targets & PathNode::kPayload) != 0) {
            record_.has_payload = true;
            record_.payload_begin = begin;
            record_.payload_end = end;
            frame.in_payload = true;
            frame.payload_root = true;
        }
        if ((targets & PathNode::kTime) != 0) record_.time = met(kind, begin, end, string);
        for (std::size_t i = 0; i < record_.key_parts.size(); ++i)
            if ((node.key_parts & (1u << i)) != 0) record_.key_parts[i] = met(kind, begin, end, string);
    }

    ScannedPage::Found found(JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string) const {
        ScannedPage::Found out;
        out.kind = kind;
        out.begin = begin;
        out.end = end;
        if (string != nullptr) out.string = *string;
        return out;
    }

    Met met(JsonKind kind, std::size_t begin, std::size_t end, const JsonString* string) const {
        Met out;
        out.kind = kind;
        out.text = body_.substr(begin, end - begin);
        if (string != nullptr) out.string = *string;
        return out;
    }

    std::optional<std::int64_t> backlog_number(JsonKind kind, std::size_t begin, std::size_t end) const {
        if (kind != JsonKind::integer) return std::nullopt;
        return int64_of(body_.substr(begin, end - begin));
    }

    // An element of the records: a record, or the first problem.
    const PathNode* element(JsonKind kind) {
        const std::size_t index = out_.count++;
        if (kind != JsonKind::object) {
            record_problem(fmt::format("{} #{} is {}, expected {}", paths_.record_noun, index, describe(kind),
                                       paths_.record_shape));
            return nullptr;
        }
        record_.index = index;
        record_.duplicate.clear();
        for (auto& part : record_.key_parts) part.kind.reset();
        record_.time.kind.reset();
        record_.has_payload = false;
        record_.payload_nul = nullptr;
        in_record_ = true;
        return &paths_.record;
    }

    // A name is compared decoded ("ev\u0065nts" is "events"), as a JSON
    // reader would; a name on a path that appears twice is ambiguous, and an
    // exactly-once loader does not guess which one the source meant.
    const PathNode* member(Frame& frame, const JsonString& name) {
        std::size_t position = 0;
        const PathNode* child = frame.node->member(name, position);
        if (child == nullptr) return nullptr;
        const std::uint32_t bit = std::uint32_t{1} << position;
        if ((frame.seen & bit) == 0) {
            frame.seen |= bit;
            return child;
        }
        duplicate(*frame.node, *child);
        return nullptr;
    }

    void duplicate(const PathNode& object, const PathNode& member) {
        const std::string where = object.pointer.empty() ? "" : " in " + shown_json_text(object.pointer);
        if (in_record_) {
            if (record_.duplicate.empty())
                record_.duplicate = fmt::format("\"{}\"{}", shown_json_text(member.name), where);
        } else if (!out_.document_problem) {
            out_.document_problem =
                fmt::format("duplicate member \"{}\" {}", shown_json_text(member.name),
                            object.pointer.empty() ? "in the top-level object"
                                                   : "in the object at " + shown_json_text(object.pointer));
        }
    }

    void payload_nul(const char* where) {
        if (record_.payload_nul == nullptr) record_.payload_nul = where;
    }

    void record_problem(std::string why) {
        if (!out_.record_problem) out_.record_problem = std::move(why);
    }

    // Only the first problem is reported, so after one nothing is kept.
    void finish_record() {
        in_record_ = false;
        if (out_.record_problem) return;
        RecordKey key;
        if (auto problem = problem_of_record(key)) {
            record_problem(std::move(*problem));
            out_.kept.clear();
            out_.keys.clear();
            out_.times.clear();
            return;
        }
        if (paths_.keyed_by_id) check_order(key.id);
        if (out_.kept.size() < keep_) {
            out_.kept.push_back({key.id, record_.payload_begin, record_.payload_end});
            if (!paths_.keyed_by_id) out_.keys.push_back(std::move(key.text));
        }
        if (paths_.read_times) out_.times.push_back(time_text(record_.time));
    }

    void check_order(std::int64_t id) {
        if (!out_.order_problem) {
            const std::size_t index = record_.index;
            if (!paths_.newest_first) {
                out_.order_problem = id_violation(index, id, previous_id_, after_id_, paths_.sent_cursor);
            } else if (id == after_id_ && paths_.sent_cursor.inclusive && (index == 0 || id < previous_id_)) {
                // Newest first, the cursor's own record comes last: any
                // after it is below the cursor.
            } else if (id <= after_id_) {
                out_.order_problem = id_violation(index, id, id, after_id_, paths_.sent_cursor);
            } else if (index > 0 && id >= previous_id_) {
                out_.order_problem = fmt::format(
                    "ids not strictly decreasing (records come newest first): event #{} has id {} after id {}", index,
                    id, previous_id_);
            }
        }
        previous_id_ = id;
    }

    /// Today's protocol wraps each record as {"id", "payload"}; an API's own
    /// records have no "payload": say how to read them as they are.
    std::string missing_payload(const RecordKey& key) const {
        const std::string missing = fmt::format("{}: {} is missing", label(key), paths_.payload_name);
        if (!paths_.standard) return missing;
        if (out_.records_at_top)
            return missing + ": an API's own records? --records \"\" stores each of a bare array whole";
        return missing + ": an API's own records? --records /events stores each whole";
    }

    std::optional<std::string> problem_of_record(RecordKey& key) const {
        if (!record_.duplicate.empty())
            return fmt::format("{} #{}: duplicate member {}", paths_.record_noun, record_.index, record_.duplicate);
        if (auto why = read_key(key)) return fmt::format("{} #{}: {}", paths_.record_noun, record_.index, *why);
        if (!record_.has_payload) return missing_payload(key);
        if (record_.payload_nul)
            return fmt::format("{}: {} has U+0000 in {}, which PostgreSQL jsonb cannot store", label(key),
                               paths_.payload_name, record_.payload_nul);
        if (paths_.read_times) return time_problem(key);
        return std::nullopt;
    }

    // How a message names a record whose key is known: "event #3 (id 7)",
    // "record #3 (key evt_1)". Only for messages: a record read well costs
    // no formatting.
    std::string label(const RecordKey& key) const {
        if (paths_.keyed_by_id) return fmt::format("{} #{} (id {})", paths_.record_noun, record_.index, key.id);
        return fmt::format("{} #{} (key {})", paths_.record_noun, record_.index, shown_json_text(key.text));
    }

    std::optional<std::string> time_problem(const RecordKey& key) const {
        const auto& kind = record_.time.kind;
        if (!kind) return fmt::format("{}: {} is missing", label(key), paths_.time_name);
        if (*kind != JsonKind::string && *kind != JsonKind::integer && *kind != JsonKind::floating)
            return fmt::format("{}: {} is {}, expected a string or a number", label(key), paths_.time_name,
                               describe(*kind));
        return std::nullopt;
    }

    // The key (its id, or its text), or why the record has none.
    std::optional<std::string> read_key(RecordKey& key) const {
        if (paths_.keyed_by_id) return read_id(record_.key_parts.front(), key.id);
        return key_text(record_.key_parts, paths_.key_names, key.text);
    }

    std::optional<std::string> read_id(const Met& part, std::int64_t& id) const {
        const std::string& name = paths_.key_names.front();
        if (!part.kind) return fmt::format("{} is missing", name);
        if (*part.kind == JsonKind::floating)
            return fmt::format("{} is a floating-point number ({}), expected an integer", name,
                               shown_json_text(part.text));
        if (*part.kind != JsonKind::integer)
            return fmt::format("{} is {}, expected an integer", name, describe(*part.kind));
        const auto value = int64_of(part.text);
        if (!value)
            return fmt::format("{} {} is out of the 64-bit signed integer range", name, shown_json_text(part.text));
        id = *value;
        return std::nullopt;
    }

    // A time as the paging reads it: a string decoded, a number as sent.
    static std::string time_text(const Met& time) {
        if (*time.kind != JsonKind::string) return std::string(time.text);
        return *decoded_json_string(time.string, std::numeric_limits<std::size_t>::max());
    }

    std::string_view body_;
    const PagePaths& paths_;
    ScannedPage& out_;
    const std::int64_t after_id_;
    std::int64_t previous_id_;
    const std::size_t keep_;
    /// Per open container, innermost last; within a quiet one, only how
    /// many more are open (they are quiet too, and alike).
    std::vector<Frame> frames_;
    std::size_t quiet_depth_ = 0;
    const PathNode* pending_ = nullptr;  ///< the path's place of the member whose value comes next
    bool in_record_ = false;             ///< records do not nest
    RecordFields record_;                ///< the record open now
};

}  // namespace

ScannedPage scan_page(std::string_view body, const PagePaths& paths, std::int64_t after_id, std::size_t keep,
                      int max_depth) {
    ScannedPage out;
    PageVisitor visitor(body, paths, out, after_id, keep);
    out.syntax = read_strict_json(body, max_depth, visitor);
    return out;
}

}  // namespace tributary
