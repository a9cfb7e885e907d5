#pragma once

#include <string>

namespace tributary::console {

/// The console's Prometheus metrics (GET /metrics): the port the API serves
/// them through, so that it needs no metrics library. Thread-safe.
class ConsoleMetrics {
public:
    virtual ~ConsoleMetrics() = default;
    /// The exposition text (Prometheus text format 0.0.4). Never throws for
    /// a database that is away: that is one of the figures.
    virtual std::string scrape() = 0;
};

}  // namespace tributary::console
