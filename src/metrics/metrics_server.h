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

/// Serves GET /metrics (Prometheus text format) and GET /healthz (200 "ok",
/// or 503 with a one-line reason) on its own thread, until destroyed.
class MetricsServer {
public:
    /// `address` is HOST:PORT (port 0 picks a free one). Throws
    /// std::runtime_error naming the address when it cannot listen.
    MetricsServer(const std::string& address, std::function<std::string()> scrape, std::function<Health()> health);
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
