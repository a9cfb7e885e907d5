#include "receivers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <stdexcept>

#include "cluster.h"
#include "processes.h"
#include "proxy.h"

namespace tributary::crash {

namespace {

/// The lowest port the kernel hands out to outgoing connections.
int lowest_ephemeral_port() {
    std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
    int low = 32768;
    range >> low;
    return low;
}

bool can_bind(int port) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("socket() failed");
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    close(fd);
    return ok;
}

}  // namespace

int free_port() {
    // Below the ephemeral range: a receiver is restarted on the same port
    // again and again, and while it is down an outgoing connection (the
    // sender's, a loader's) could otherwise take that port as its own.
    static std::mt19937 random(std::random_device{}());
    const int high = lowest_ephemeral_port() - 1;
    std::uniform_int_distribution<int> pick(std::min(20000, high - 1000), high);
    for (int attempt = 0; attempt < 100; ++attempt) {
        const int port = pick(random);
        if (can_bind(port)) return port;
    }
    throw std::runtime_error("cannot find a free port on 127.0.0.1 below the ephemeral range");
}

std::vector<ProcessSpec> receiver_specs(int count, const Cluster& cluster, const Proxy* proxy) {
    std::vector<ProcessSpec> out;
    for (int i = 0; i < count; ++i) {
        ProcessSpec spec;
        spec.name = "crash-receiver-" + std::to_string(i);
        spec.via_proxy = proxy && i % 2 == 1;
        spec.db_url = cluster.url(spec.name, spec.via_proxy ? proxy->listen_port() : 0);
        // Not yet bound by the receivers before it: pick another if taken by one of them.
        do spec.ready_port = free_port();
        while (
            std::any_of(out.begin(), out.end(), [&](const ProcessSpec& r) { return r.ready_port == spec.ready_port; }));
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
