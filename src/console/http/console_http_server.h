#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "console/console_api.h"

namespace httplib {
class Server;
}

namespace tributary::console {

/// `tributary console`'s HTTP side: serves a ConsoleApi on HOST:PORT with
/// cpp-httplib until stopped. A pool of threads, each serving one connection
/// at a time: a live tail holds its thread for as long as the page is open,
/// so the pool is the tails' limit (TailSlots) plus room for the requests of
/// the pages meanwhile.
class ConsoleHttpServer {
public:
    struct Options {
        int threads = 24;                        ///< 8 live tails + 16 connections for requests
        std::size_t max_body_bytes = 64 * 1024;  ///< an action's body at most (413 past it)
        std::chrono::seconds read_timeout{10};   ///< a request's head and body, between reads
        std::chrono::seconds write_timeout{10};  ///< an answer (and each tail event) to a slow client
    };

    /// `address` is HOST:PORT (port 0 picks a free one). Throws
    /// std::runtime_error naming the address when it cannot listen there
    /// (the port taken), std::invalid_argument for an address that is not
    /// HOST:PORT.
    ConsoleHttpServer(const std::string& address, const ConsoleApi& api, Options options);
    /// stop().
    ~ConsoleHttpServer();
    ConsoleHttpServer(const ConsoleHttpServer&) = delete;
    ConsoleHttpServer& operator=(const ConsoleHttpServer&) = delete;

    int port() const { return port_; }

    /// Stops accepting, lets the requests in hand finish (live tails end at
    /// the StopSignal they were given) and joins the threads.
    void stop();

private:
    std::unique_ptr<httplib::Server> server_;
    std::thread thread_;
    int port_ = 0;
};

}  // namespace tributary::console
