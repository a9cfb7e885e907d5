#pragma once

#include <cstdint>
#include <vector>

#include "source_store.h"

namespace tributary::source_server {

// The Zendesk fixture's incremental stream: ticket i is created and last updated at
// T(i) = (start_ms + 10 ms * i) / 1000 (whole seconds, 100 tickets a second, so a 1000-ticket
// page always ends in a later second than it starts). In fault mode `updates`, ticket i - 100
// comes again right after ticket i (i > 100, i a multiple of 10), updated at T(i) and solved.
struct ZendeskEntry {
    std::int64_t ticket_id;
    std::int64_t created_s;
    std::int64_t updated_s;
    bool updated;  // a later version of the ticket
};

// The entries with updated_s >= start_time_s, in stream order (updated_s never decreases), at most `max`.
std::vector<ZendeskEntry> zendesk_entries(const Source& source, std::int64_t start_time_s, std::int64_t max,
                                          bool with_updates);

}  // namespace tributary::source_server
