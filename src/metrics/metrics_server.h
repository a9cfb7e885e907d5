#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "health.h"

namespace tributary::metrics {

/// What a nudge found: the source, no such source, or no database to ask.
enum class NudgeOutcome { nudged, unknown_source, unavailable };

/// Serves GET /metrics (Prometheus text format), GET /healthz (200 "ok",
/// or 503 with a one-line reason) and, when given a handler, POST
/// /sources/NAME/nudge (200, 404 for an unknown source, 503 without a
/// database; a body is neither needed nor read beyond its Content-Length)
/// until destroyed.
///
/// One thread multiplexes every connection with poll(), so that slow
/// clients cost a buffer each, never a thread: a request must arrive whole
/// (head and body, at most 16 KiB) within 5 s of its connection, and its
/// answer leave within 10 s, else the connection is closed; past 512 open
/// connections the oldest still sending its request makes room for a new
/// one. A supervisor's probe is answered however many trickling clients
/// there are. Nudges (a database statement) run on a thread of their own,
/// one at a time. One request per connection (Connection: close).
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

    /// What the poll loop and the nudge thread share.
    struct State;

private:
    std::unique_ptr<State> state_;
    std::thread thread_;
    std::thread nudge_thread_;
    int port_ = 0;
};

/// Splits "HOST:PORT" ("[::1]:9187" for IPv6). Throws std::invalid_argument
/// with a message naming the value when it is not that.
std::pair<std::string, int> split_address(const std::string& address);

}  // namespace tributary::metrics
