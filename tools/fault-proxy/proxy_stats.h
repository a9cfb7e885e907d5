#pragma once

#include <cstdint>

namespace tributary::fault_proxy {

// GET /stats. Counters are since start; bytes count what was written to the other side.
struct ProxyStats {
    std::uint64_t connections_total = 0;  // client connections accepted (refused ones not included)
    std::uint64_t connections_open = 0;
    std::uint64_t cuts = 0;             // connection pairs reset by /cut
    std::uint64_t commit_cuts = 0;      // connection pairs reset right after forwarding a COMMIT
    std::uint64_t commits_seen = 0;     // simple-query COMMIT messages recognised
    std::uint64_t bytes_up = 0;         // client -> server, written to the server
    std::uint64_t bytes_down = 0;       // server -> client, written to the client
    std::uint64_t bytes_swallowed = 0;  // read during a blackhole and dropped, both directions
    std::uint64_t refused = 0;          // client connections reset at once by /refuse
    // The faults in force.
    std::int64_t delay_ms = 0;
    bool blackhole = false;
    bool refuse = false;
    std::int64_t commit_cuts_pending = 0;  // COMMITs still to be cut after
};

}  // namespace tributary::fault_proxy
