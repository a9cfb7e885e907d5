#pragma once

#include <optional>
#include <string>
#include <utility>

#include "core/reading.h"
#include "paging_strategy.h"
#include "timestamp.h"

namespace tributary {

/// `--paginate time`: a timestamp watermark. The position is the watermark
/// as the source wrote it (a record's --time-field, or the body's --next
/// such as Zendesk's end_time; "" = none yet, everything asked for); each
/// request asks from the watermark minus --lookback, so that records
/// written late are read again, and the store skips by key those it has.
class TimePaging : public PagingStrategy {
public:
    explicit TimePaging(Paging paging) : paging_(std::move(paging)) {}
    PageRequest request(const Cursor& at, int limit) const override;
    PageOutcome advance(const Cursor& at, const PageView& page, int limit) const override;

private:
    /// A watermark and the text it was read from.
    struct Mark {
        std::string text;
        Timestamp time;
    };
    /// Where the page leaves the watermark before it is checked against the
    /// old one: the body's --next, else the latest record, else nothing.
    struct Found {
        std::optional<Mark> mark;
        std::optional<std::string> problem;
    };
    Found latest_of(const PageView& page, bool at_end) const;
    PageOutcome moved(const Cursor& at, const std::optional<Mark>& old, const Found& found, bool at_end,
                      int limit) const;

    Paging paging_;
};

}  // namespace tributary
