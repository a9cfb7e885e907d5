#include "page_paths.h"

#include <algorithm>

#include "json_pointer.h"

namespace tributary {

namespace {

// A token as a pointer writes it.
std::string escaped_token(const std::string& token) {
    std::string out;
    for (const char c : token) {
        if (c == '~') out += "~0";
        else if (c == '/') out += "~1";
        else out += c;
    }
    return out;
}

PathNode& child_of(PathNode& node, const std::string& token) {
    for (auto& child : node.children)
        if (child.name == token) return child;
    PathNode child;
    child.name = token;
    child.index = json_pointer_index(token);
    child.pointer = node.pointer + "/" + escaped_token(token);
    node.longest_name = std::max(node.longest_name, token.size());
    node.children.push_back(std::move(child));
    return node.children.back();
}

/// Where one flag's pointer goes: `targets` and `key_parts` are added to the
/// place it names.
struct Placed {
    const char* flag;
    std::string pointer;
    unsigned targets = 0;
    std::uint32_t key_parts = 0;
};

// Adds a pointer to a tree. From the top of the body, nothing can be read
// within the records (placed first): their elements are records, read with
// the record's own tree. (Today's body that is an array is the records too,
// but then it has no member to read.)
std::optional<std::string> place(PathNode& root, const Placed& what, const std::string& records_flag) {
    const auto tokens = json_pointer_tokens(what.pointer);
    if (!tokens) return std::string(what.flag) + " '" + what.pointer + "' is no JSON pointer";
    PathNode* node = &root;
    for (const auto& token : *tokens) {
        if ((node->targets & PathNode::kRecords) != 0)
            return std::string(what.flag) + " " + what.pointer + " lies within the records (" + records_flag + ")";
        node = &child_of(*node, token);
    }
    node->targets |= what.targets;
    node->key_parts |= what.key_parts;
    return std::nullopt;
}

std::optional<std::string> place_all(PathNode& root, const std::vector<Placed>& all, const std::string& records_flag) {
    for (const auto& what : all)
        if (auto problem = place(root, what, records_flag)) return problem;
    return std::nullopt;
}

std::string pointer_words(const std::string& pointer) { return pointer.empty() ? "\"\"" : pointer; }

void name_things(const Source& source, PagePaths& paths) {
    const RecordLayout& layout = source.layout;
    paths.time_name = "time field " + pointer_words(source.paging.time_field);
    if (paths.standard && paths.keyed_by_id && layout.key == std::vector<std::string>{"/id"}) return;
    paths.record_noun = "record";
    paths.record_shape = "an object";
    paths.key_names.clear();
    for (const auto& key : layout.key) paths.key_names.push_back("key " + pointer_words(key));
    const std::string payload = layout.payload_pointer();
    paths.payload_name = payload.empty() || payload == "/payload" ? "payload" : "payload " + payload;
}

}  // namespace

const PathNode* PathNode::member(const JsonString& name, std::size_t& position) const {
    std::optional<std::string> decoded;
    if (name.escaped) {
        decoded = decoded_json_string(name, longest_name);
        if (!decoded) return nullptr;
    }
    const std::string_view text = decoded ? std::string_view(*decoded) : name.raw;
    for (std::size_t i = 0; i < children.size(); ++i) {
        if (children[i].name == text) {
            position = i;
            return &children[i];
        }
    }
    return nullptr;
}

const PathNode* PathNode::element(std::size_t at, std::size_t& position) const {
    for (std::size_t i = 0; i < children.size(); ++i) {
        if (children[i].index == at) {
            position = i;
            return &children[i];
        }
    }
    return nullptr;
}

std::optional<std::string> compile_page_paths(const Source& source, PagePaths& paths) {
    const RecordLayout& layout = source.layout;
    const Paging& paging = source.paging;
    paths = PagePaths{};
    paths.keyed_by_id = source.keyed_by_id();
    paths.standard = !layout.records;
    paths.newest_first = layout.newest_first;
    paths.key_parts = layout.key.size();
    paths.read_times = paging.style == PagingStyle::time && !paging.time_field.empty();
    paths.records_pointer = layout.records ? pointer_words(*layout.records) : "/events";
    paths.sent_cursor.param = paging.cursor_param.empty() ? default_cursor_param(paging.style) : paging.cursor_param;
    paths.sent_cursor.inclusive = paging.inclusive;
    if (layout.key.empty()) return "a record needs a key: no --key is set";
    if (paths.keyed_by_id && layout.key.size() != 1)
        return "--paginate after-id takes exactly one --key (an integer id), not " + std::to_string(layout.key.size());
    if (layout.key.size() > kMaxKeyParts)
        return "a key has at most " + std::to_string(kMaxKeyParts) + " parts, not " + std::to_string(layout.key.size());
    name_things(source, paths);

    std::vector<Placed> top;
    if (layout.records) {
        top.push_back({"--records", *layout.records, PathNode::kRecords});
    } else {
        paths.document.targets = PathNode::kRecordsIfArray;
        top.push_back({"--records", "/events", PathNode::kRecords});
        top.push_back({"--records", "/remaining", PathNode::kRemaining});
        top.push_back({"--records", "/head_id", PathNode::kHeadId});
    }
    const std::pair<const std::string*, Placed> optional_top[] = {
        {&paging.next, {"--next", paging.next, PathNode::kNext}},
        {&paging.has_more, {"--has-more", paging.has_more, PathNode::kHasMore}},
        {&paging.end_of_stream, {"--end-of-stream", paging.end_of_stream, PathNode::kEndOfStream}},
    };
    for (const auto& [pointer, what] : optional_top)
        if (!pointer->empty()) top.push_back(what);
    const std::string records_flag = "--records " + paths.records_pointer;
    if (auto problem = place_all(paths.document, top, records_flag)) return problem;

    std::vector<Placed> within{{"--payload", layout.payload_pointer(), PathNode::kPayload}};
    for (std::size_t i = 0; i < layout.key.size(); ++i) within.push_back({"--key", layout.key[i], 0, 1u << i});
    if (paths.read_times) within.push_back({"--time-field", paging.time_field, PathNode::kTime});
    return place_all(paths.record, within, records_flag);
}

}  // namespace tributary
