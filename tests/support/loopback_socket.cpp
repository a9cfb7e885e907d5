#include "loopback_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace tributary::testing {

LoopbackSocket::LoopbackSocket(Mode mode) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        (mode == Mode::listening && ::listen(fd_, 16) != 0) ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
        if (fd_ >= 0) ::close(fd_);
        throw std::runtime_error("cannot bind a socket on the loopback");
    }
    port_ = ntohs(address.sin_port);
}

LoopbackSocket::~LoopbackSocket() { ::close(fd_); }

int free_loopback_port() { return LoopbackSocket(LoopbackSocket::Mode::bound).port(); }

}  // namespace tributary::testing
