#include "zendesk_stream.h"

#include <algorithm>

namespace tributary::source_server {
namespace {

constexpr std::int64_t kTickMs = 10;
constexpr std::int64_t kUpdateLag = 100;  // ids (1 s) between a ticket and its update
constexpr std::int64_t kUpdateEvery = 10;

std::int64_t ticket_time_s(const Source& source, std::int64_t id) { return (source.start_ms() + kTickMs * id) / 1000; }

}  // namespace

std::vector<ZendeskEntry> zendesk_entries(const Source& source, std::int64_t start_time_s, std::int64_t max,
                                          bool with_updates) {
    std::vector<ZendeskEntry> out;
    const std::int64_t produced = source.produced();
    // The first id whose time reaches start_time: start_ms + 10 i >= 1000 start_time.
    const std::int64_t lag_ms = start_time_s * 1000 - source.start_ms();
    const std::int64_t first = std::max<std::int64_t>(1, lag_ms <= 0 ? 1 : (lag_ms + kTickMs - 1) / kTickMs);
    for (std::int64_t id = first; id <= produced && static_cast<std::int64_t>(out.size()) < max; ++id) {
        const std::int64_t t = ticket_time_s(source, id);
        out.push_back({id, t, t, false});
        const std::int64_t older = id - kUpdateLag;
        if (with_updates && older >= 1 && older % kUpdateEvery == 0 && static_cast<std::int64_t>(out.size()) < max) {
            out.push_back({older, ticket_time_s(source, older), t, true});
        }
    }
    return out;
}

}  // namespace tributary::source_server
