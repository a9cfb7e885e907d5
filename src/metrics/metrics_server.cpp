#include "metrics_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "http_exchange.h"

namespace tributary::metrics {

namespace {

using Clock = std::chrono::steady_clock;

/// A whole request (head and body) must arrive within this of its
/// connection: a client that trickles bytes is cut off, not waited for.
constexpr std::chrono::seconds kRequestDeadline{5};
/// An answer must leave within this (a client that does not read).
constexpr std::chrono::seconds kAnswerDeadline{10};
/// Open connections at most; the process's descriptors are also its
/// database sessions and source requests (soft limit often 1024).
constexpr std::size_t kMaxConnections = 512;

bool valid_source_name(const std::string& name) {
    if (name.empty() || name.size() > 100) return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
               c == '-';
    });
}

int open_listener(const std::string& address) {
    const auto [host, port] = split_address(address);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (::getaddrinfo(host.c_str(), service.c_str(), &hints, &found) != 0 || !found)
        throw std::runtime_error("cannot listen on " + address + " for metrics: unknown host");
    int fd = -1;
    for (auto* ai = found; ai && fd < 0; ai = ai->ai_next) {
        fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        const int on = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(found);
    if (fd < 0) throw std::runtime_error("cannot listen on " + address + " for metrics: is the port in use?");
    return fd;
}

int bound_port(int fd) {
    sockaddr_storage addr{};
    socklen_t length = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
    if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
    return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

}  // namespace

std::pair<std::string, int> split_address(const std::string& address) {
    const auto colon = address.rfind(':');
    const auto bad = std::invalid_argument("invalid address '" + address + "': expected HOST:PORT, e.g. 127.0.0.1:9187");
    if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) throw bad;
    std::string host = address.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    const std::string port_text = address.substr(colon + 1);
    if (port_text.find_first_not_of("0123456789") != std::string::npos || port_text.size() > 5) throw bad;
    const int port = std::stoi(port_text);
    if (port > 65535) throw bad;
    return {host, port};
}

struct MetricsServer::State {
    enum class Phase { reading, nudging, writing };
    struct Connection {
        int fd = -1;
        Phase phase = Phase::reading;
        Clock::time_point opened, deadline;
        std::string in, out;
        std::size_t sent = 0;
        bool head_only = false;  ///< a HEAD request: the answer without its body
    };

    std::function<std::string()> scrape;
    std::function<Health()> health;
    NudgeHandler nudge;
    int listener = -1;
    int pipe[2] = {-1, -1};  ///< wakes the poll loop: a stop, or a nudge answered
    std::atomic<bool> stopping{false};

    // The poll loop's own.
    std::map<std::uint64_t, Connection> connections;
    std::uint64_t next_id = 0;
    Clock::time_point accept_paused_until{};  ///< out of descriptors: let some close first

    // Shared with the nudge thread.
    std::mutex mutex;
    std::condition_variable nudge_wanted;
    std::deque<std::pair<std::uint64_t, std::string>> nudges;
    std::vector<std::pair<std::uint64_t, Answer>> nudged;

    ~State() {
        for (auto& [id, c] : connections) ::close(c.fd);
        if (listener >= 0) ::close(listener);
        if (pipe[0] >= 0) ::close(pipe[0]);
        if (pipe[1] >= 0) ::close(pipe[1]);
    }

    void poke() const {
        const char byte = 1;
        [[maybe_unused]] const auto n = ::write(pipe[1], &byte, 1);
    }

    void serve();
    void accept_all(Clock::time_point now);
    void read_from(std::uint64_t id, Connection& c);
    void write_to(Connection& c);
    void answer(Connection& c, const Answer& a);
    void route(std::uint64_t id, Connection& c, const RequestHead& head);
    void take_nudge_answers();
    void close(std::uint64_t id);
    void run_nudges();
};

void MetricsServer::State::serve() {
    std::vector<pollfd> fds;
    std::vector<std::uint64_t> ids;
    while (!stopping) {
        // A negative descriptor is skipped by poll().
        const bool accepting = Clock::now() >= accept_paused_until;
        fds.assign({{accepting ? listener : -1, POLLIN, 0}, {pipe[0], POLLIN, 0}});
        ids.assign(2, 0);
        auto wake = accepting ? Clock::time_point::max() : accept_paused_until;
        for (auto& [id, c] : connections) {
            if (c.phase == Phase::nudging) continue;
            fds.push_back({c.fd, static_cast<short>(c.phase == Phase::reading ? POLLIN : POLLOUT), 0});
            ids.push_back(id);
            wake = std::min(wake, c.deadline);
        }
        int timeout_ms = -1;
        if (wake != Clock::time_point::max())
            timeout_ms = static_cast<int>(std::max<long long>(
                0, std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now()).count()));
        if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;
        if (fds[1].revents) {
            char buffer[64];
            while (::read(pipe[0], buffer, sizeof buffer) > 0) {
            }
            take_nudge_answers();
        }
        const auto now = Clock::now();
        for (std::size_t i = 2; i < fds.size(); ++i) {
            if (!fds[i].revents) continue;
            const auto found = connections.find(ids[i]);
            if (found == connections.end()) continue;
            if (found->second.phase == Phase::reading) read_from(ids[i], found->second);
            else if (found->second.phase == Phase::writing) write_to(found->second);
            if (found->second.fd < 0) connections.erase(found);
        }
        for (auto it = connections.begin(); it != connections.end();) {
            const bool late = it->second.phase != Phase::nudging && now >= it->second.deadline;
            if (late) ::close(it->second.fd);
            it = late ? connections.erase(it) : std::next(it);
        }
        if (fds[0].revents) accept_all(now);
    }
}

void MetricsServer::State::accept_all(Clock::time_point now) {
    for (;;) {
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            // Out of descriptors, the listener stays readable: without a
            // pause, poll() would spin until some connection closes.
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                accept_paused_until = now + std::chrono::milliseconds(100);
            return;  // EAGAIN: all taken
        }
        if (connections.size() >= kMaxConnections) {
            // Room for the newcomer: the oldest connection still sending its
            // request is the likeliest to be one that never will.
            auto oldest = connections.end();
            for (auto it = connections.begin(); it != connections.end(); ++it)
                if (it->second.phase == Phase::reading && (oldest == connections.end() || it->second.opened < oldest->second.opened))
                    oldest = it;
            if (oldest == connections.end()) {
                ::close(fd);
                continue;
            }
            ::close(oldest->second.fd);
            connections.erase(oldest);
        }
        Connection c;
        c.fd = fd;
        c.opened = now;
        c.deadline = now + kRequestDeadline;
        connections.emplace(next_id++, std::move(c));
    }
}

void MetricsServer::State::read_from(std::uint64_t id, Connection& c) {
    char buffer[4096];
    for (;;) {
        const auto n = ::recv(c.fd, buffer, sizeof buffer, 0);
        if (n > 0) {
            c.in.append(buffer, static_cast<std::size_t>(n));
            if (c.in.size() > kMaxRequest) break;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (n < 0 && errno == EINTR) continue;
        ::close(c.fd);  // the peer went away (or an error) before a whole request
        c.fd = -1;
        return;
    }
    const ParsedRequest parsed = parse_request(c.in);
    if (parsed.refusal) return answer(c, *parsed.refusal);
    if (parsed.complete) route(id, c, parsed.head);
}

void MetricsServer::State::route(std::uint64_t id, Connection& c, const RequestHead& head) {
    // HEAD: what GET would answer, without the body (some probes use it).
    c.head_only = head.method == "HEAD";
    const bool get = head.method == "GET" || c.head_only;
    try {
        if (head.path == "/metrics") {
            if (!get) return answer(c, {405, "use GET\n"});
            return answer(c, {200, scrape(), "text/plain; version=0.0.4; charset=utf-8"});
        }
        if (head.path == "/healthz") {
            if (!get) return answer(c, {405, "use GET\n"});
            const Health h = health();
            std::string body = h.healthy ? "ok\n" : h.reason + "\n";
            for (const auto& warning : h.warnings) body += "warning: " + warning + "\n";
            return answer(c, {h.healthy ? 200 : 503, body});
        }
        const std::string prefix = "/sources/", suffix = "/nudge";
        if (nudge && head.path.size() > prefix.size() + suffix.size() && head.path.rfind(prefix, 0) == 0 &&
            head.path.compare(head.path.size() - suffix.size(), suffix.size(), suffix) == 0) {
            const std::string name =
                head.path.substr(prefix.size(), head.path.size() - prefix.size() - suffix.size());
            if (valid_source_name(name)) {
                if (head.method != "POST") return answer(c, {405, "use POST\n"});
                c.phase = Phase::nudging;
                {
                    std::lock_guard<std::mutex> guard(mutex);
                    nudges.emplace_back(id, name);
                }
                nudge_wanted.notify_one();
                return;
            }
        }
        return answer(c, {404, "not found\n"});
    } catch (const std::exception& e) {
        return answer(c, {500, std::string("internal error: ") + e.what() + "\n"});
    }
}

void MetricsServer::State::answer(Connection& c, const Answer& a) {
    c.out = serialized(a, c.head_only);
    c.sent = 0;
    c.phase = Phase::writing;
    c.deadline = Clock::now() + kAnswerDeadline;
    write_to(c);
}

void MetricsServer::State::write_to(Connection& c) {
    while (c.sent < c.out.size()) {
        const auto n = ::send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (n > 0) {
            c.sent += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    ::close(c.fd);  // sent, or the peer is gone
    c.fd = -1;
}

void MetricsServer::State::take_nudge_answers() {
    std::vector<std::pair<std::uint64_t, Answer>> answered;
    {
        std::lock_guard<std::mutex> guard(mutex);
        answered.swap(nudged);
    }
    for (auto& [id, a] : answered) {
        const auto found = connections.find(id);
        if (found == connections.end()) continue;
        answer(found->second, a);
        if (found->second.fd < 0) connections.erase(found);
    }
}

void MetricsServer::State::run_nudges() {
    for (;;) {
        std::pair<std::uint64_t, std::string> next;
        {
            std::unique_lock<std::mutex> lock(mutex);
            nudge_wanted.wait(lock, [this] { return stopping || !nudges.empty(); });
            if (stopping) return;
            next = std::move(nudges.front());
            nudges.pop_front();
        }
        Answer a;
        switch (nudge(next.second)) {
            case NudgeOutcome::nudged: a = {200, "nudged " + next.second + "\n"}; break;
            case NudgeOutcome::unknown_source: a = {404, "no source named " + next.second + "\n"}; break;
            case NudgeOutcome::unavailable: a = {503, "database unreachable, try again\n"}; break;
        }
        {
            std::lock_guard<std::mutex> guard(mutex);
            nudged.emplace_back(next.first, std::move(a));
        }
        poke();
    }
}

MetricsServer::MetricsServer(const std::string& address, std::function<std::string()> scrape,
                             std::function<Health()> health, NudgeHandler nudge)
    : state_(std::make_unique<State>()) {
    state_->scrape = std::move(scrape);
    state_->health = std::move(health);
    state_->nudge = std::move(nudge);
    if (::pipe2(state_->pipe, O_NONBLOCK | O_CLOEXEC) != 0)
        throw std::runtime_error("cannot create a pipe for the metrics server");
    state_->listener = open_listener(address);
    port_ = bound_port(state_->listener);
    thread_ = std::thread([s = state_.get()] { s->serve(); });
    if (state_->nudge) nudge_thread_ = std::thread([s = state_.get()] { s->run_nudges(); });
}

MetricsServer::~MetricsServer() {
    {
        std::lock_guard<std::mutex> guard(state_->mutex);
        state_->stopping = true;
    }
    state_->nudge_wanted.notify_all();
    state_->poke();
    thread_.join();
    if (nudge_thread_.joinable()) nudge_thread_.join();
}

}  // namespace tributary::metrics
