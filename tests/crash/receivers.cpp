#include "receivers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

#include "cluster.h"
#include "processes.h"
#include "proxy.h"

namespace tributary::crash {

int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket() failed");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = 0;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                    getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
    close(fd);
    if (!ok) throw std::runtime_error("cannot find a free port on 127.0.0.1");
    return ntohs(address.sin_port);
}

std::vector<ProcessSpec> receiver_specs(int count, const Cluster& cluster, const Proxy* proxy) {
    std::vector<ProcessSpec> out;
    for (int i = 0; i < count; ++i) {
        ProcessSpec spec;
        spec.name = "crash-receiver-" + std::to_string(i);
        spec.via_proxy = proxy && i % 2 == 1;
        spec.db_url = cluster.url(spec.name, spec.via_proxy ? proxy->listen_port() : 0);
        spec.ready_port = free_port();
        spec.args = {"receive", "--listen", "127.0.0.1:" + std::to_string(spec.ready_port)};
        out.push_back(std::move(spec));
    }
    return out;
}

std::vector<int> receiver_ports(const std::vector<ProcessSpec>& receivers) {
    std::vector<int> ports;
    for (const auto& r : receivers) ports.push_back(r.ready_port);
    return ports;
}

bool receive_command_exists(const std::string& tributary_bin) {
    try {
        // Without the subcommand, --help still exits 0 (the program's help): look for its flag.
        const auto help = run_to_end({tributary_bin, "receive", "--help"}, std::chrono::seconds(30));
        return help.code == 0 && help.out.find("--listen") != std::string::npos;
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace tributary::crash
