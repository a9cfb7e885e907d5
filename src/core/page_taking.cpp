#include "page_taking.h"

#include "batch_rules.h"

namespace tributary {

namespace {

/// The cursor parameter as sent, for the messages of the rules. Not inclusive there: the fetcher
/// has already left out a page's first record that was the cursor's own (--inclusive).
SentCursor sent_cursor(const Source& source) {
    const auto& param = source.paging.cursor_param;
    return {param.empty() ? default_cursor_param(source.paging.style) : param, false};
}

}  // namespace

std::optional<std::string> page_violation(const Source& source, const Cursor& at, const EventBatch& events) {
    return source.keyed_by_id() ? batch_violation(events, at.id(), sent_cursor(source)) : key_violation(events);
}

Cursor take_page(const Source& source, const Cursor& at, FetchResult& result) {
    if (source.keyed_by_id() && result.events.size() > static_cast<std::size_t>(source.batch_size)) {
        result.events.resize(static_cast<std::size_t>(source.batch_size));
        result.next.reset();  // the last id kept
    }
    if (result.next) return *result.next;
    return result.events.empty() ? at : Cursor::at_id(result.events.back().id);
}

}  // namespace tributary
