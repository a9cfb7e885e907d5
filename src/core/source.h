#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace tributary {

/// Where and how a source is asked for events. Only the fetcher reads it.
struct Endpoint {
    std::string url;
    /// Extra request headers, each "Name: value" (auth tokens live here, so
    /// never log them).
    std::vector<std::string> headers;
    std::chrono::milliseconds timeout{10000};
};

/// A registered source, as the loader sees it.
struct Source {
    int id = 0;
    std::string name;
    Endpoint endpoint;
    std::chrono::milliseconds interval{200};  ///< minimum pause between two requests
    int batch_size = 1000;                    ///< `limit` of one request
};

}  // namespace tributary
