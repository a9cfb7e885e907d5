#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <optional>
#include <string>

namespace tributary::fault_proxy {

// Thin helpers over BSD sockets. Every descriptor they make is non-blocking and close-on-exec.

struct SocketAddress {
    sockaddr_storage storage{};
    socklen_t length = 0;
};

// Resolves HOST:PORT for TCP (the first address getaddrinfo gives); error text in `error`.
std::optional<SocketAddress> resolve(const std::string& host, int port, std::string& error);

// A listening TCP socket on 127.0.0.1:port (0 = any free port); -1 and `error` on failure.
int listen_loopback(int port, std::string& error);
int local_port(int fd);  // the port a socket is bound to, -1 on error

// Starts a non-blocking connect; returns the socket (connect may still be in progress: wait for
// it to become writable, then ask connect_error) or -1 with errno set.
int start_connect(const SocketAddress& address);
int connect_error(int fd);  // SO_ERROR: 0 once connected

void set_nodelay(int fd);
std::string peer_name(int fd);  // "127.0.0.1:54321", "?" when unknown

// Closes with SO_LINGER 0: the peer gets a reset, queued data is dropped.
void abort_close(int fd);

}  // namespace tributary::fault_proxy
