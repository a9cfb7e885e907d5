#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "health.h"

namespace httplib {
class Server;
}

namespace tributary::metrics {

/// What a nudge found: the source, no such source, or no database to ask.
enum class NudgeOutcome { nudged, unknown_source, unavailable };

/// Serves GET /metrics (Prometheus text format), GET /healthz (200 "ok",
/// or 503 with a one-line reason) and, when given a handler, POST
/// /sources/NAME/nudge (200, 404 for an unknown source, 503 without a
/// database) on its own thread, until destroyed.
class MetricsServer {
public:
    using NudgeHandler = std::function<NudgeOutcome(const std::string& source)>;

    /// `address` is HOST:PORT (port 0 picks a free one). Throws
    /// std::runtime_error naming the address when it cannot listen.
    MetricsServer(const std::string& address, std::function<std::string()> scrape, std::function<Health()> health,
                  NudgeHandler nudge = {});
    ~MetricsServer();
    MetricsServer(const MetricsServer&) = delete;
    MetricsServer& operator=(const MetricsServer&) = delete;

    int port() const { return port_; }

private:
    std::unique_ptr<httplib::Server> server_;
    std::thread thread_;
    int port_ = 0;
};

/// Splits "HOST:PORT" ("[::1]:9187" for IPv6). Throws std::invalid_argument
/// with a message naming the value when it is not that.
std::pair<std::string, int> split_address(const std::string& address);

}  // namespace tributary::metrics
