// tributary-fault-proxy: a TCP proxy in front of PostgreSQL that injects network faults on
// command, for the crash test suite. See README.md.
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include <httplib.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "control_api.h"
#include "options.h"
#include "proxy.h"
#include "sockets.h"

namespace fp = tributary::fault_proxy;

namespace {

constexpr auto kControlStartTimeout = std::chrono::seconds(10);

void set_up_logging(bool verbose) {
    auto logger = spdlog::stderr_color_mt("fault-proxy");
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e%z fault-proxy %^%l%$ %v");
    spdlog::set_default_logger(logger);
    spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::info);
}

std::string host_port(const std::string& host, int port) {
    const bool ipv6_literal = host.find(':') != std::string::npos;
    return (ipv6_literal ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace

int main(int argc, char** argv) {
    fp::ParseResult parsed = fp::parse_options(argc, argv);
    if (!parsed.error.empty()) {
        std::fprintf(stderr, "tributary-fault-proxy: %s\n(try --help)\n", parsed.error.c_str());
        return 2;
    }
    const fp::Options& opt = parsed.options;
    if (opt.help) {
        std::fputs(fp::usage_text().c_str(), stdout);
        return 0;
    }
    set_up_logging(opt.verbose);

    std::string error;
    auto target = fp::resolve(opt.target_host, opt.target_port, error);
    if (!target) {
        std::fprintf(stderr, "tributary-fault-proxy: cannot resolve --target-host '%s': %s\n(try --help)\n",
                     opt.target_host.c_str(), error.c_str());
        return 2;
    }

    // SIGINT/SIGTERM are read from a signalfd by the event loop; blocked before any thread starts,
    // so every thread inherits the mask. SIGPIPE: a peer that goes away must not kill us.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);
    int stop_fd = signalfd(-1, &stop_signals, SFD_CLOEXEC);
    if (stop_fd < 0) {
        std::perror("tributary-fault-proxy: signalfd");
        return 1;
    }

    int listen_fd = fp::listen_loopback(opt.listen_port, error);
    if (listen_fd < 0) {
        std::fprintf(stderr, "tributary-fault-proxy: cannot listen on 127.0.0.1:%d: %s\n", opt.listen_port,
                     error.c_str());
        return 1;
    }
    const int listen_port = fp::local_port(listen_fd);
    const std::string target_name = host_port(opt.target_host, opt.target_port);
    fp::Proxy proxy(listen_fd, *target, target_name);

    httplib::Server control;
    fp::install_control_routes(control, proxy);
    int control_port = opt.control_port;
    if (control_port == 0) {
        control_port = control.bind_to_any_port("127.0.0.1");
    } else if (!control.bind_to_port("127.0.0.1", control_port)) {
        control_port = -1;
    }
    if (control_port < 0) {
        std::fprintf(stderr, "tributary-fault-proxy: cannot listen on 127.0.0.1:%d (control)\n", opt.control_port);
        return 1;
    }
    std::thread control_thread([&control] { control.listen_after_bind(); });
    // stop() only acts once listen_after_bind() runs; the line below promises the API is up.
    const auto deadline = std::chrono::steady_clock::now() + kControlStartTimeout;
    while (!control.is_running() && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!control.is_running()) {
        std::fprintf(stderr, "tributary-fault-proxy: the control API did not start\n");
        std::fflush(nullptr);
        std::_Exit(1);
    }

    spdlog::info("proxying 127.0.0.1:{} -> {}, control API on http://127.0.0.1:{}", listen_port, target_name,
                 control_port);
    std::cout << "listening on 127.0.0.1:" << listen_port << " control http://127.0.0.1:" << control_port
              << std::endl;  // endl flushes: scripts wait for this line

    proxy.run(stop_fd);  // until SIGINT/SIGTERM
    control.stop();
    control_thread.join();
    close(stop_fd);
    spdlog::info("stopped");
    return 0;
}
