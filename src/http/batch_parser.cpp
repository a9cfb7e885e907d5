#include "batch_parser.h"

#include "page_parser.h"

namespace tributary {
namespace {

// Today's protocol: {"events": [...]} or a bare array, keyed by "id".
const Source& standard_source() {
    static const Source source;
    return source;
}

}  // namespace

FetchResult parse_batch(std::string_view body, std::int64_t after_id, int limit, const FetchLimits& limits) {
    return parse_borrowed_page(body, standard_source(), Cursor::at_id(after_id), limit, limits).batch;
}

FetchResult parse_owned_batch(std::string&& body, std::int64_t after_id, int limit, const FetchLimits& limits) {
    return parse_page(std::move(body), standard_source(), Cursor::at_id(after_id), limit, limits).batch;
}

}  // namespace tributary
