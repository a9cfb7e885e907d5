#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "webhook/webhook_receiver.h"

namespace tributary::receiver {

/// `tributary receive`'s HTTP side: serves a WebhookReceiver on HOST:PORT
/// with GNU libmicrohttpd until stopped.
///
/// One thread per connection: WebhookReceiver::handle blocks until the
/// request's events are committed (with every other request waiting at that
/// moment: the group commit), so each connection waits on its own thread and
/// concurrent keep-alive senders are committed together. At most
/// `max_connections` are open at once: past it, each new connection cuts
/// the one that has waited longest for a request of its own (as run's
/// /metrics server does), so clients trickling bytes cannot lock senders out.
///
/// The body is read into memory only up to the receiver's largest body
/// limit: a Content-Length over it is answered 413 before any of the body is
/// read; a body without one (chunked) that grows past it is dropped as it
/// arrives, never held, and answered 413 when it ends (libmicrohttpd 0.9.75
/// cannot answer a request before its body is read). Every body held counts
/// against one budget for all connections (503 past it). A connection that takes longer than `request_timeout` to send
/// a whole request (a slow drip, or idle between keep-alive requests) is cut: no client can hold a connection and its
/// thread by trickling bytes.
class WebhookHttpServer {
public:
    struct Options {
        unsigned max_connections = 256;
        std::chrono::seconds request_timeout{30};
        /// A request's head (request line and headers) at most: libmicrohttpd
        /// answers 431 past it.
        std::size_t max_head_bytes = 32 * 1024;
        /// Bytes of request bodies all connections may hold at once (each
        /// takes its Content-Length, or its body's size as it grows): past
        /// it, 503 with Retry-After. Memory stays bounded whatever
        /// max_connections times the largest body limit would be.
        std::size_t max_body_bytes_in_flight = std::size_t{256} << 20;
    };

    /// Told of each connection in flight (between its request's head and
    /// its answer), for the metrics.
    using InFlight = std::function<void(int change)>;

    /// `address` is HOST:PORT (port 0 picks a free one). Throws
    /// std::runtime_error naming the address when it cannot listen.
    WebhookHttpServer(const std::string& address, webhook::WebhookReceiver& receiver, Options options,
                      InFlight in_flight = {});
    /// stop(), then closes every connection.
    ~WebhookHttpServer();
    WebhookHttpServer(const WebhookHttpServer&) = delete;
    WebhookHttpServer& operator=(const WebhookHttpServer&) = delete;

    int port() const { return port_; }

    /// Stops accepting connections; requests that come on open connections
    /// meanwhile are answered 503 (Retry-After) and their connections closed.
    /// Waits up to `grace` for the requests being handled to be answered.
    void stop(std::chrono::milliseconds grace);

    struct State;

private:
    std::unique_ptr<State> state_;
    int port_ = 0;
};

}  // namespace tributary::receiver
