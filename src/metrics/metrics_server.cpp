#include "metrics_server.h"

#include <microhttpd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "core/names.h"
#include "listen_socket.h"
#include "waiting_connections.h"

namespace tributary::metrics {

namespace {

/// A connection that sends nothing (and is sent nothing) for this long is
/// closed: a client that stalls mid-request, or an idle keep-alive one.
constexpr unsigned kIdleTimeoutSeconds = 5;
/// Open connections at most; fewer when the process may open fewer than
/// twice as many descriptors (the rest are its database sessions and
/// source requests).
constexpr rlim_t kMaxConnections = 512;
/// Past (limit - this) connections, each new one closes the one waiting
/// longest for a request (WaitingConnections). libmicrohttpd accepts up to 10
/// connections per turn of its loop before those cut off are gone: room for
/// them below its limit, at which it would refuse newcomers.
constexpr unsigned kHeadroom = 16;
/// Nudges waiting for the nudge thread at most (each holds a connection
/// that cannot be cut off); past this, 503 at once.
constexpr std::size_t kMaxWaitingNudges = 64;
/// On stop, how long the nudges answered last may take to leave.
constexpr std::chrono::seconds kLastAnswersGrace{2};
/// Each connection's memory pool: its read buffer, so the longest request
/// head it accepts (libmicrohttpd answers 431 or 414 past it).
constexpr std::size_t kConnectionMemory = 16 * 1024;
/// A nudge needs no body; one that is sent is dropped as it arrives, and
/// refused past this: 413 when its Content-Length says so, else (chunked)
/// its connection is closed.
constexpr std::size_t kMaxNudgeBody = 16 * 1024;

const char* const kTextPlain = "text/plain; charset=utf-8";
const char* const kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";

struct Answer {
    unsigned status = 200;
    std::string body;
    const char* content_type = kTextPlain;
};

/// One request, from its head to its answer (libmicrohttpd's per-request
/// pointer); freed when libmicrohttpd is done with it.
struct Request {
    std::size_t body_bytes = 0;
    std::string source;            ///< a nudge's
    bool suspended = false;        ///< a nudge handed to the nudge thread
    std::optional<Answer> nudged;  ///< set by the nudge thread before it resumes the connection
};

/// NAME in /sources/NAME/nudge, or empty.
std::string nudged_source(const std::string& path) {
    const std::string prefix = "/sources/", suffix = "/nudge";
    if (path.size() <= prefix.size() + suffix.size() || path.rfind(prefix, 0) != 0 ||
        path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
        return {};
    std::string name = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
    return is_valid_name(name) ? name : std::string();
}

unsigned connection_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return kMaxConnections;
    return static_cast<unsigned>(std::clamp<rlim_t>(limit.rlim_cur / 2, 2 * kHeadroom, kMaxConnections));
}

MHD_Result send_answer(MHD_Connection* connection, const Answer& answer) {
    MHD_Response* response = MHD_create_response_from_buffer(answer.body.size(), const_cast<char*>(answer.body.data()),
                                                             MHD_RESPMEM_MUST_COPY);
    if (!response) return MHD_NO;
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, answer.content_type);
    // HEAD: libmicrohttpd sends the head GET would get, Content-Length included, without the body.
    const MHD_Result queued = MHD_queue_response(connection, answer.status, response);
    MHD_destroy_response(response);
    return queued;
}

}  // namespace

std::pair<std::string, int> split_address(const std::string& address) {
    const auto colon = address.rfind(':');
    const auto bad =
        std::invalid_argument("invalid address '" + address + "': expected HOST:PORT, e.g. 127.0.0.1:9187");
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
    explicit State(std::size_t room) : waiting(room) {}

    std::function<std::string()> scrape;
    std::function<Health()> health;
    NudgeHandler nudge;
    MHD_Daemon* daemon = nullptr;
    WaitingConnections waiting;  ///< the server's polling thread's own

    // Shared by the server's thread and the nudge thread.
    std::mutex mutex;
    std::condition_variable nudge_wanted;
    std::deque<std::pair<MHD_Connection*, Request*>> nudges;  ///< their connections suspended
    std::size_t unanswered = 0;                               ///< nudges suspended and not yet sent their answer
    std::condition_variable answered;
    bool stopping = false;

    MHD_Result respond(MHD_Connection* connection, const std::string& method, const std::string& path,
                       Request& request);
    MHD_Result start_nudge(MHD_Connection* connection, Request& request);
    Answer nudged(const std::string& source) const;
    void run_nudges();
};

namespace {

/// libmicrohttpd calls this on its thread: once when a request's head has
/// arrived, once per piece of its body, then once with no body left (and
/// once more after a suspended connection is resumed).
MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url, const char* method,
                      const char* /*version*/, const char* /*upload_data*/, size_t* upload_data_size, void** req_cls) {
    auto& state = *static_cast<MetricsServer::State*>(cls);
    auto* request = static_cast<Request*>(*req_cls);
    if (!request) {
        *req_cls = request = new Request;
        // A body announced too large is refused before it is read. Anything
        // else is answered once the request is whole: an answer now would
        // end a keep-alive connection.
        const char* length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length && std::strtoull(length, nullptr, 10) > kMaxNudgeBody) {
            state.waiting.busy(connection);
            return send_answer(connection, {413, "request body too large\n"});
        }
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        // A body nobody reads (only nudges are POSTed): dropped as it comes.
        request->body_bytes += *upload_data_size;
        *upload_data_size = 0;
        return request->body_bytes > kMaxNudgeBody ? MHD_NO : MHD_YES;  // MHD_NO: the connection is closed
    }
    state.waiting.busy(connection);  // the request is whole
    if (request->nudged) return send_answer(connection, *request->nudged);
    try {
        return state.respond(connection, method, url, *request);
    } catch (const std::exception& e) {
        return send_answer(connection, {500, std::string("internal error: ") + e.what() + "\n"});
    }
}

/// A request is done with (answered, or its connection closing).
void on_completed(void* cls, MHD_Connection* connection, void** req_cls, MHD_RequestTerminationCode) {
    auto& state = *static_cast<MetricsServer::State*>(cls);
    const auto* request = static_cast<Request*>(*req_cls);
    if (request && request->suspended) {
        std::lock_guard<std::mutex> guard(state.mutex);
        --state.unanswered;
        state.answered.notify_all();
    }
    delete request;
    *req_cls = nullptr;
    state.waiting.waiting(connection);
}

/// A connection accepted, or closed (before its descriptor is).
void on_connection(void* cls, MHD_Connection* connection, void** /*socket_context*/,
                   MHD_ConnectionNotificationCode code) {
    auto& waiting = static_cast<MetricsServer::State*>(cls)->waiting;
    if (code != MHD_CONNECTION_NOTIFY_STARTED) return waiting.closed(connection);
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!info) return;
    // libmicrohttpd has no call to close a connection that is not in a
    // request handler; a shutdown makes it see the end of the stream and
    // close the connection itself. The descriptor is still that
    // connection's: it is closed only after its CLOSED notice, on this
    // same thread.
    if (const auto cut = waiting.opened(connection, info->connect_fd)) ::shutdown(*cut, SHUT_RDWR);
}

}  // namespace

MHD_Result MetricsServer::State::respond(MHD_Connection* connection, const std::string& method, const std::string& path,
                                         Request& request) {
    const bool get = method == MHD_HTTP_METHOD_GET || method == MHD_HTTP_METHOD_HEAD;
    if (path == "/metrics") {
        if (!get) return send_answer(connection, {405, "use GET\n"});
        return send_answer(connection, {200, scrape(), kPrometheusText});
    }
    if (path == "/healthz") {
        if (!get) return send_answer(connection, {405, "use GET\n"});
        const Health h = health();
        std::string body = h.healthy ? "ok\n" : h.reason + "\n";
        for (const auto& warning : h.warnings) body += "warning: " + warning + "\n";
        return send_answer(connection, {h.healthy ? 200u : 503u, body});
    }
    if (nudge) {
        request.source = nudged_source(path);  // libmicrohttpd gives the path unescaped, without its query
        if (!request.source.empty()) {
            if (method != MHD_HTTP_METHOD_POST) return send_answer(connection, {405, "use POST\n"});
            return start_nudge(connection, request);
        }
    }
    return send_answer(connection, {404, "not found\n"});
}

/// A nudge is a database statement, which can block as long as the
/// database does: it runs on the nudge thread, and its connection is
/// suspended (out of the server's polling) until the answer is in.
MHD_Result MetricsServer::State::start_nudge(MHD_Connection* connection, Request& request) {
    std::lock_guard<std::mutex> guard(mutex);
    // Past this, the nudge thread may be gone: nothing left suspended at
    // MHD_stop_daemon (which would abort the process).
    if (stopping) return send_answer(connection, {503, "shutting down, try again\n"});
    if (nudges.size() >= kMaxWaitingNudges)
        return send_answer(connection, {503, "too many nudges waiting, try again\n"});
    // Suspended before the nudge thread can see it, so its resume always
    // finds the connection suspended.
    MHD_suspend_connection(connection);
    request.suspended = true;
    ++unanswered;
    nudges.emplace_back(connection, &request);
    nudge_wanted.notify_one();
    return MHD_YES;
}

Answer MetricsServer::State::nudged(const std::string& source) const {
    switch (nudge(source)) {
        case NudgeOutcome::nudged: return {200, "nudged " + source + "\n"};
        case NudgeOutcome::unknown_source: return {404, "no source named " + source + "\n"};
        case NudgeOutcome::unavailable: break;
    }
    return {503, "database unreachable, try again\n"};
}

void MetricsServer::State::run_nudges() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
        nudge_wanted.wait(lock, [this] { return stopping || !nudges.empty(); });
        if (nudges.empty()) return;  // stopping, and every connection resumed
        const auto [connection, request] = nudges.front();
        nudges.pop_front();
        const bool stop = stopping;
        lock.unlock();
        // The request is the nudge thread's alone while its connection is
        // suspended; resuming hands it back (libmicrohttpd locks in between).
        try {
            request->nudged = stop ? Answer{503, "shutting down, try again\n"} : nudged(request->source);
        } catch (const std::exception& e) {
            request->nudged = Answer{500, std::string("internal error: ") + e.what() + "\n"};
        }
        MHD_resume_connection(connection);
        lock.lock();
    }
}

MetricsServer::MetricsServer(const std::string& address, std::function<std::string()> scrape,
                             std::function<Health()> health, NudgeHandler nudge) {
    const unsigned limit = connection_limit();
    state_ = std::make_unique<State>(limit - kHeadroom);
    state_->scrape = std::move(scrape);
    state_->health = std::move(health);
    state_->nudge = std::move(nudge);
    const int listener = open_listener(address, "for metrics");
    port_ = bound_port(listener);
    // One internal thread polls every connection (epoll on Linux): a slow
    // client costs a slot and its memory pool, never a thread.
    state_->daemon =
        MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME, 0, nullptr, nullptr, &on_request,
                         state_.get(), MHD_OPTION_LISTEN_SOCKET, static_cast<MHD_socket>(listener),        //
                         MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(kIdleTimeoutSeconds),        //
                         MHD_OPTION_CONNECTION_LIMIT, limit,                                               //
                         MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<std::size_t>(kConnectionMemory),  //
                         MHD_OPTION_NOTIFY_COMPLETED, &on_completed, state_.get(),                         //
                         MHD_OPTION_NOTIFY_CONNECTION, &on_connection, state_.get(),                       //
                         MHD_OPTION_END);
    // On failure the listener is left open: libmicrohttpd may have closed it
    // already, and a second close could hit a descriptor reused since.
    if (!state_->daemon) throw std::runtime_error("cannot start the metrics server on " + address);
    if (state_->nudge) nudge_thread_ = std::thread([s = state_.get()] { s->run_nudges(); });
}

MetricsServer::~MetricsServer() {
    {
        std::lock_guard<std::mutex> guard(state_->mutex);
        state_->stopping = true;
    }
    state_->nudge_wanted.notify_all();
    if (nudge_thread_.joinable()) nudge_thread_.join();  // after it has resumed every suspended connection
    {
        // The last answers are sent by the server's thread: let them leave
        // before every connection is closed (bounded: a client may not read).
        std::unique_lock<std::mutex> lock(state_->mutex);
        state_->answered.wait_for(lock, kLastAnswersGrace, [s = state_.get()] { return s->unanswered == 0; });
    }
    MHD_stop_daemon(state_->daemon);  // closes the listener and every connection
}

}  // namespace tributary::metrics
