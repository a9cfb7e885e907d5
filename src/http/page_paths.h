#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/batch_rules.h"
#include "core/source.h"
#include "strict_json_reader.h"

namespace tributary {

/// One place on the way of a JSON pointer: the pointers of a layout, merged
/// into a tree, so that one pass over a body follows all of them at once.
struct PathNode {
    // What the loader reads at a place (bits of `targets`: one place may be
    // more than one thing, e.g. --next and --has-more at the same pointer).
    static constexpr unsigned kRecords = 1u << 0;         ///< the array of records
    static constexpr unsigned kRecordsIfArray = 1u << 1;  ///< today's protocol: the body, when an array
    static constexpr unsigned kNext = 1u << 2;            ///< --next
    static constexpr unsigned kHasMore = 1u << 3;         ///< --has-more
    static constexpr unsigned kEndOfStream = 1u << 4;     ///< --end-of-stream
    static constexpr unsigned kRemaining = 1u << 5;       ///< today's protocol: "remaining"
    static constexpr unsigned kHeadId = 1u << 6;          ///< today's protocol: "head_id"
    static constexpr unsigned kPayload = 1u << 7;         ///< within a record: what is stored
    static constexpr unsigned kTime = 1u << 8;            ///< within a record: --time-field

    std::string name;                  ///< the reference token leading here, decoded
    std::optional<std::size_t> index;  ///< the array element the token names, if any
    std::string pointer;               ///< from the root of its tree, for messages
    unsigned targets = 0;              ///< the k... bits above
    std::uint32_t key_parts = 0;       ///< bit i: the key's part i lies here
    std::vector<PathNode> children;
    std::size_t longest_name = 0;  ///< of the children's names

    /// The child an object member leads to (its name compared decoded), and
    /// its position among the children; nullptr when none.
    const PathNode* member(const JsonString& name, std::size_t& position) const;
    /// The child an array element leads to; nullptr when none.
    const PathNode* element(std::size_t at, std::size_t& position) const;
};

/// The most parts a composite key may have (a record's path tree tells
/// them apart by one bit each).
constexpr std::size_t kMaxKeyParts = 16;

/// A source's layout and paging pointers, ready for scan_page().
struct PagePaths {
    PathNode document;  ///< pointers from the top of the body
    PathNode record;    ///< pointers within each record
    std::size_t key_parts = 1;
    bool keyed_by_id = true;      ///< one integer key (Source::keyed_by_id)
    bool read_times = false;      ///< --paginate time with a --time-field
    bool standard = true;         ///< today's protocol: "events" or a bare array
    bool newest_first = false;    ///< RecordLayout::newest_first
    std::string records_pointer;  ///< for messages (--records)
    SentCursor sent_cursor;       ///< keyed by id: the cursor parameter and whether it is inclusive

    // How messages name what they talk about. Today's protocol keyed by id
    // keeps today's words ("event #3: id is missing").
    std::string record_noun = "event";
    std::vector<std::string> key_names{"id"};
    std::string payload_name = "payload";
    std::string time_name;
    std::string record_shape = "an object with \"id\" and \"payload\"";
};

/// Merges `source`'s pointers (RecordLayout, and Paging's next, has_more,
/// end_of_stream, time_field) into `paths`. Returns why that cannot be done
/// (a pointer that is none, no key or too many, after-id with a composite
/// key, a pointer from the top that leads into the records); nothing when it
/// can.
std::optional<std::string> compile_page_paths(const Source& source, PagePaths& paths);

}  // namespace tributary
