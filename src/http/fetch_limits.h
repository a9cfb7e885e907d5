#pragma once

#include <chrono>
#include <cstddef>

namespace tributary {

/// What a source may cost us per request, whatever it sends. The total time
/// of one request is per source (Endpoint::timeout), not here.
struct FetchLimits {
    /// Largest response body accepted, counted after decompression (so a gzip
    /// bomb is cut off too). Larger responses are transient failures.
    std::size_t max_body_bytes = 64u * 1024u * 1024u;
    /// Deepest nesting of arrays/objects in the whole document, envelope
    /// included (`{"events":[{"payload":...}]}` uses 3 levels before the
    /// payload's own). The reader stops at the first container past it,
    /// without recursion, so a hostile depth costs nothing.
    int max_depth = 64;
    /// Time allowed to establish the TCP (and TLS) connection.
    std::chrono::milliseconds connect_timeout{5000};
};

}  // namespace tributary
