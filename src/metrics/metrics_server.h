#pragma once

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
/// database; a body is neither needed nor kept) until destroyed. HEAD is GET
/// without the body.
///
/// GNU libmicrohttpd serves it: one internal thread polls every connection
/// (epoll), so that slow clients cost a connection slot and a little memory,
/// never a thread. A connection silent for 5 s is closed; at most 512
/// connections (fewer under a low descriptor limit) are open at once, and
/// past 496 each new one closes the one that has waited longest for a
/// request, so that a supervisor's probe is answered however many clients
/// trickle bytes. A request's head may take 16 KiB. Keep-alive is allowed.
/// Nudges (a database statement) run on a thread of their own, one at
/// a time, their connections suspended meanwhile: a database outage never
/// delays /healthz.
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

    /// What the server's thread and the nudge thread share.
    struct State;

private:
    std::unique_ptr<State> state_;
    std::thread nudge_thread_;
    int port_ = 0;
};

/// Splits "HOST:PORT" ("[::1]:9187" for IPv6). Throws std::invalid_argument
/// with a message naming the value when it is not that.
std::pair<std::string, int> split_address(const std::string& address);

}  // namespace tributary::metrics
