#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fault_modes.h"

namespace tributary::source_server {

struct FaultSetting {
    std::string source;
    FaultMode mode = FaultMode::none;
};

struct Options {
    std::string host = "127.0.0.1";
    int port = 0;              // 0 = pick a free port
    std::int64_t sources = 1;  // PREFIX0 .. PREFIX{N-1}
    std::string prefix = "demo.src-";
    std::int64_t backlog = 100;          // events each source holds at start (ids 1..E)
    double rate = 0;                     // events per second per source after start
    std::int64_t max_events = 0;         // stop producing at this many events (0 = no cap)
    std::size_t payload_bytes = 200;     // approximate size of each payload's JSON text
    std::vector<FaultSetting> faults;    // --fault NAME=MODE, applied at start
    std::int64_t rate_limit = 0;         // --rate-limit: style requests per window per source (0 = off)
    std::int64_t rate_window_ms = 1000;  // --rate-window-ms
    std::string oauth_client_id;         // --oauth-client ID:SECRET (empty id = no OAuth2)
    std::string oauth_client_secret;
    std::int64_t oauth_expires_s = 3600;  // --oauth-expires-s: lifetime of an issued token
    int threads = 8;                      // HTTP worker threads
    bool verbose = false;                 // one stderr line per request
    bool help = false;
};

struct ParseResult {
    Options options;
    std::string error;  // empty when the command line is valid
};

ParseResult parse_options(int argc, const char* const* argv);
std::string usage_text();

// Name of source number `index` (PREFIX + decimal index).
std::string source_name(const Options& options, std::int64_t index);

}  // namespace tributary::source_server
