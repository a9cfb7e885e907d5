#pragma once

#include <string>

namespace tributary::fault_proxy {

struct Options {
    int listen_port = 0;                    // 0 = pick a free port (always on 127.0.0.1)
    std::string target_host = "127.0.0.1";  // the PostgreSQL server
    int target_port = 0;                    // required
    int control_port = 0;                   // HTTP control API, 0 = pick a free port (127.0.0.1)
    bool verbose = false;                   // also log every connection opened and closed
    bool help = false;
};

struct ParseResult {
    Options options;
    std::string error;  // empty when the command line is valid
};

ParseResult parse_options(int argc, const char* const* argv);
std::string usage_text();

}  // namespace tributary::fault_proxy
