#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cursor.h"
#include "core/event.h"
#include "core/reading.h"

namespace tributary {

/// What to GET for the page at a cursor.
struct PageRequest {
    /// Empty: the source's URL with `query` appended to its own query. Else
    /// an absolute URL to GET as it is (a next link), `query` then empty.
    std::string url;
    std::vector<std::pair<std::string, std::string>> query;
    /// Set when the cursor cannot be asked for (a position that is no page
    /// number or no timestamp, say after a rewind by hand): nothing is
    /// asked, the source fails with this message.
    std::optional<std::string> problem;
};

/// What one parse of a page found, besides its records' payloads: the
/// strategy decides from it which records are new and where to go next.
struct PageView {
    /// Every record of the page, in the page's order, keys filled (`id` for
    /// after-id, else `key`).
    const EventBatch& records;
    /// time: each record's --time-field value as text (a string decoded, a
    /// number's digits), one per record; empty for other styles.
    const std::vector<std::string>& times;
    std::optional<std::string> next;    ///< the body's value at --next (string decoded, or a number's digits)
    std::optional<bool> has_more;       ///< the body's boolean at --has-more
    std::optional<bool> end_of_stream;  ///< the body's boolean at --end-of-stream
    /// link: the next page's URL (the body's at --next, else the Link
    /// header's rel="next"), made absolute against the URL asked and already
    /// checked against the hosts it may lead to by the fetcher.
    std::optional<std::string> link_next;
    /// Read from the answer's headers for every style: whether its Link
    /// header names a rel="next" page, and its X-Total-Count (the records
    /// of the whole list as the API counts them; unset when absent or no
    /// number). The styles that count records check them (page_size.h).
    bool link_header_next = false;
    std::optional<std::int64_t> total_count;
};

/// A page's verdict.
struct PageOutcome {
    /// Set when the page cannot be trusted (a loop, a watermark gone back, a
    /// page that shrank, a token over 8 KB...): nothing of it is stored, the
    /// source fails with this message.
    std::optional<std::string> problem;
    /// Records [first_new, size) are the ones to store.
    std::size_t first_new = 0;
    Cursor next;          ///< the cursor after this page
    bool at_end = false;  ///< the source has nothing more for now
};

/// One pagination style (docs/sources.md): how to ask for the page at a
/// cursor, and what the answer means. Pure: no I/O, no clock, so each style
/// is unit-tested on its own. Thread-safe (const).
class PagingStrategy {
public:
    virtual ~PagingStrategy() = default;
    virtual PageRequest request(const Cursor& at, int limit) const = 0;
    virtual PageOutcome advance(const Cursor& at, const PageView& page, int limit) const = 0;
};

/// The strategy for `paging.style`.
std::unique_ptr<PagingStrategy> make_paging_strategy(const Paging& paging);

/// Tokens, keys, URLs and watermarks longer than this are refused.
constexpr std::size_t kMaxCursorBytes = 8192;

}  // namespace tributary
