#pragma once

namespace tributary::testing {

/// A TCP socket bound to a port of the loopback that the kernel chose, closed on destruction.
/// Bound alone, connecting to it is refused (and nobody else can take the port while it is
/// open); listening, connecting works and nothing ever answers. Throws std::runtime_error when
/// the kernel refuses.
class LoopbackSocket {
public:
    enum class Mode { bound, listening };

    explicit LoopbackSocket(Mode mode);
    ~LoopbackSocket();
    LoopbackSocket(const LoopbackSocket&) = delete;
    LoopbackSocket& operator=(const LoopbackSocket&) = delete;

    int port() const { return port_; }

private:
    int fd_ = -1;
    int port_ = 0;
};

/// A loopback port that nobody listens on now: the kernel's choice for a socket bound to port 0,
/// closed again (another process may take it before the caller does: fine for a child server
/// started right away).
int free_loopback_port();

}  // namespace tributary::testing
