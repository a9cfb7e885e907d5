#include "source_styles.h"

namespace tributary::crash {

namespace {

// Every keyed style reads the source server's generic records
// ({"key":"evt-…","id":N,"updated_at":…,"payload":{…}}) and stores their
// payload member, so that what is stored equals the truth's payloads.
std::vector<std::string> keyed_flags(const std::string& records, std::vector<std::string> style_flags) {
    std::vector<std::string> flags{"--records", records, "--key", "/key", "--payload", "/payload"};
    flags.insert(flags.end(), style_flags.begin(), style_flags.end());
    return flags;
}

}  // namespace

std::string SourceStyle::path(const std::string& source_name) const {
    std::string out = route;
    const auto at = out.find("NAME");
    if (at != std::string::npos) out.replace(at, 4, source_name);
    return out;
}

const SourceStyle& after_id_style() {
    static const SourceStyle kAfterId{"after-id", "/sources/NAME/events", {}};
    return kAfterId;
}

const SourceStyle& healthy_style(int index) {
    static const std::vector<SourceStyle> kRotation{
        after_id_style(),
        {"after-key", "/styles/after-key/NAME",
         keyed_flags("/data", {"--paginate", "after-key", "--has-more", "/has_more"})},
        {"cursor", "/styles/cursor/NAME", keyed_flags("/data", {"--paginate", "cursor", "--next", "/next_cursor"})},
        {"link", "/styles/link/NAME", keyed_flags("", {"--paginate", "link"})},
        // Records are 1 ms apart by updated_at: a 1 s lookback window holds
        // about 1000 of them, so a page must hold more, or the watermark
        // could stall on a page of records all seen before.
        {"time", "/styles/time/NAME",
         keyed_flags("/data", {"--paginate", "time", "--time-field", "/updated_at", "--lookback", "1s", "--batch-size",
                               "2000"})},
        {"page", "/styles/page/NAME", keyed_flags("/results", {"--paginate", "page"})},
        {"offset", "/styles/offset/NAME", keyed_flags("/items", {"--paginate", "offset"})},
    };
    return kRotation.at(static_cast<std::size_t>(index) % kRotation.size());
}

}  // namespace tributary::crash
