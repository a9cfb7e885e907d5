// tributary-source-server: plays many HTTP event sources. See README.md.
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include <httplib.h>

#include "event_generator.h"
#include "measured_pool.h"
#include "oauth_issuer.h"
#include "options.h"
#include "producer.h"
#include "request_log.h"
#include "routes.h"
#include "source_store.h"
#include "wall_clock.h"

namespace ss = tributary::source_server;

namespace {

constexpr int kListenBacklog = 1024;
constexpr std::size_t kKeepAliveMaxCount = 100;  // requests per connection, then it is closed
constexpr time_t kKeepAliveTimeoutSec = 5;
// After SIGINT/SIGTERM, idle keep-alive connections keep their threads for up to the
// keep-alive timeout; past this grace the process exits without waiting for them.
constexpr auto kShutdownGrace = std::chrono::milliseconds(500);

}  // namespace

int main(int argc, char** argv) {
    ss::ParseResult parsed = ss::parse_options(argc, argv);
    if (!parsed.error.empty()) {
        std::fprintf(stderr, "tributary-source-server: %s\n(try --help)\n", parsed.error.c_str());
        return 2;
    }
    const ss::Options& opt = parsed.options;
    if (opt.help) {
        std::fputs(ss::usage_text().c_str(), stdout);
        return 0;
    }

    // Signals are taken by one thread with sigwait(); every other thread (created below)
    // inherits the blocked mask. SIGPIPE: a client that goes away must not kill us.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    ss::SourceSet sources;
    const std::int64_t start_us = ss::realtime_us();
    for (std::int64_t i = 0; i < opt.sources; ++i) {
        sources.add(std::make_unique<ss::Source>(ss::source_name(opt, i), opt.backlog, start_us));
    }
    for (const auto& f : opt.faults) sources.find(f.source)->set_fault(f.mode);

    ss::EventGenerator generator(opt.payload_bytes);
    ss::RequestLog log;
    ss::PoolStats pool_stats;
    std::atomic<bool> stopping{false};
    std::unique_ptr<ss::OAuthIssuer> oauth;
    if (!opt.oauth_client_id.empty()) {
        oauth = std::make_unique<ss::OAuthIssuer>(opt.oauth_client_id, opt.oauth_client_secret, opt.oauth_expires_s);
    }
    ss::ServerContext context{
        sources, generator, log, pool_stats, stopping, ss::RateLimit{opt.rate_limit, opt.rate_window_ms}, oauth.get()};

    httplib::Server server;
    const std::size_t threads = static_cast<std::size_t>(opt.threads);
    server.new_task_queue = [threads, &pool_stats] { return new ss::MeasuredPool(threads, pool_stats); };
    server.set_keep_alive_max_count(kKeepAliveMaxCount);
    server.set_keep_alive_timeout(kKeepAliveTimeoutSec);
    server.set_tcp_nodelay(true);
    int listen_fd = -1;
    server.set_socket_options([&listen_fd](int fd) {
        int on = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        listen_fd = fd;
    });
    if (opt.verbose) {
        server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
            std::fprintf(stderr, "%s %s -> %d\n", req.method.c_str(), req.target.c_str(), res.status);
        });
    }
    ss::install_routes(server, context);

    int port = opt.port;
    if (port == 0) {
        port = server.bind_to_any_port(opt.host);
    } else if (!server.bind_to_port(opt.host, port)) {
        port = -1;
    }
    if (port < 0) {
        std::fprintf(stderr, "tributary-source-server: cannot listen on %s:%d\n", opt.host.c_str(), opt.port);
        return 1;
    }
    // httplib listens with a backlog of 5; a burst of new connections deserves more.
    if (listen_fd >= 0) ::listen(listen_fd, kListenBacklog);

    ss::Producer producer(sources, opt.backlog, opt.rate, opt.max_events);
    producer.start();

    std::mutex done_mutex;
    std::condition_variable done_cv;
    bool done = false;
    std::thread signal_thread([&] {
        int sig = 0;
        sigwait(&stop_signals, &sig);
        stopping = true;
        std::unique_lock lock(done_mutex);
        // stop() only acts once listen_after_bind() is running: retry until it is, or main is done.
        auto deadline = std::chrono::steady_clock::now() + kShutdownGrace;
        while (!done && !server.is_running() && std::chrono::steady_clock::now() < deadline) {
            done_cv.wait_for(lock, std::chrono::milliseconds(5));
        }
        if (server.is_running()) server.stop();
        if (!done_cv.wait_until(lock, deadline, [&] { return done; })) {
            std::fflush(nullptr);
            std::_Exit(0);  // only idle keep-alive connections are left; nothing to save
        }
    });

    if (opt.verbose) {
        std::fprintf(
            stderr,
            "tributary-source-server: %lld sources %s0..%s%lld, backlog %lld, rate %g/s, max %lld, %d threads\n",
            static_cast<long long>(opt.sources), opt.prefix.c_str(), opt.prefix.c_str(),
            static_cast<long long>(opt.sources - 1), static_cast<long long>(opt.backlog), opt.rate,
            static_cast<long long>(opt.max_events), opt.threads);
    }
    const bool ipv6_literal = opt.host.find(':') != std::string::npos;
    std::cout << "listening on http://" << (ipv6_literal ? "[" + opt.host + "]" : opt.host) << ":" << port
              << std::endl;  // endl flushes: scripts wait for this line

    if (!stopping.load()) server.listen_after_bind();
    bool stopped_by_signal = stopping.load();
    if (!stopped_by_signal) {
        std::fprintf(stderr, "tributary-source-server: the server stopped unexpectedly\n");
        kill(getpid(), SIGTERM);  // wake the signal thread so it can be joined
    }
    {
        std::lock_guard lock(done_mutex);
        done = true;
    }
    done_cv.notify_all();
    signal_thread.join();
    producer.stop();
    return stopped_by_signal ? 0 : 1;
}
