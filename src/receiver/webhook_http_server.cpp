#include "webhook_http_server.h"

#include <microhttpd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "metrics/listen_socket.h"

namespace tributary::receiver {

namespace {

const char* const kJson = "application/json";
/// Connections libmicrohttpd takes beyond max_connections, each making room
/// by cutting another (State::make_room): it accepts up to 10 per turn of
/// its loop before those cut are gone.
constexpr unsigned kHeadroom = 16;

/// One request, from its head to its answer (libmicrohttpd's per-request
/// pointer); freed when libmicrohttpd is done with it.
struct Request {
    /// Why the body is dropped as it comes, to be refused once it ends.
    enum class Refusal { none, too_large, no_room };

    std::size_t limit = 0;  ///< the longest body taken
    std::string body;       ///< as received, up to `limit`
    std::size_t held = 0;   ///< bytes of the body budget this request holds
    Refusal refusal = Refusal::none;
    bool answered = false;  ///< an answer is queued already
    bool handled = false;   ///< given to the receiver: counted in State::handling until done with
};

/// Every open connection's descriptor and since when it has waited for a
/// whole request (the reaper's view).
struct OpenConnection {
    int fd = -1;
    bool busy = false;  ///< its request is whole and being answered
    bool cut = false;
    std::chrono::steady_clock::time_point since;
};

webhook::Reply error_reply(int status, const std::string& error, std::optional<std::chrono::seconds> retry = {}) {
    webhook::Reply reply;
    reply.status = status;
    reply.body = std::string(R"({"error":")") + error + "\"}";
    reply.retry_after = retry;
    return reply;
}

MHD_Result send_reply(MHD_Connection* connection, const webhook::Reply& reply, bool close) {
    MHD_Response* response =
        MHD_create_response_from_buffer(reply.body.size(), const_cast<char*>(reply.body.data()), MHD_RESPMEM_MUST_COPY);
    if (!response) return MHD_NO;
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, kJson);
    if (reply.retry_after)
        MHD_add_response_header(response, MHD_HTTP_HEADER_RETRY_AFTER,
                                std::to_string(reply.retry_after->count()).c_str());
    if (close) MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
    const MHD_Result queued = MHD_queue_response(connection, static_cast<unsigned>(reply.status), response);
    MHD_destroy_response(response);
    return queued;
}

/// Acknowledges the request's head at once rather than with the body's
/// answer. A sender that writes head and body apart without TCP_NODELAY
/// (cpp-httplib's client, by default) holds its body back until the head is
/// acknowledged (Nagle), and Linux delays that acknowledgement up to 40 ms
/// while it has nothing to send: 40 ms added to every keep-alive request.
/// Setting TCP_QUICKACK sends an acknowledgement that is due at once.
void acknowledge_head_now(MHD_Connection* connection) {
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!info) return;
    const int on = 1;
    ::setsockopt(info->connect_fd, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof on);
}

webhook::Reply refusal_reply(Request::Refusal refusal) {
    if (refusal == Request::Refusal::too_large) return error_reply(413, "request body too large");
    return error_reply(503, "too many request bodies in flight, try again", std::chrono::seconds(1));
}

}  // namespace

struct WebhookHttpServer::State {
    webhook::WebhookReceiver* receiver = nullptr;
    Options options;
    InFlight in_flight;
    MHD_Daemon* daemon = nullptr;

    std::mutex mutex;
    std::condition_variable changed;
    std::unordered_map<const MHD_Connection*, OpenConnection> open;
    std::size_t handling = 0;                 ///< requests given to the receiver, until their answer is sent
    std::atomic<std::size_t> bodies_held{0};  ///< of options.max_body_bytes_in_flight
    bool stopping = false;
    bool quiesced = false;
    bool ending = false;  ///< the reaper leaves
    std::thread reaper;

    void reap();
    /// Past max_connections, cuts the connection that has waited longest for
    /// a whole request (with the mutex held).
    void make_room();
    /// Makes `request` hold `bytes` of the body budget in all, if they are free.
    bool hold(Request& request, std::size_t bytes);
    void release(Request& request);
    void set_busy(const MHD_Connection* connection, bool busy);
    webhook::Reply handle(MHD_Connection* connection, const char* method, const char* url, const Request& request);
};

bool WebhookHttpServer::State::hold(Request& request, std::size_t bytes) {
    if (bytes <= request.held) return true;
    const std::size_t more = bytes - request.held;
    std::size_t held = bodies_held.load();
    do {
        if (held + more > options.max_body_bytes_in_flight) return false;
    } while (!bodies_held.compare_exchange_weak(held, held + more));
    request.held = bytes;
    return true;
}

void WebhookHttpServer::State::release(Request& request) {
    bodies_held -= request.held;
    request.held = 0;
}

void WebhookHttpServer::State::set_busy(const MHD_Connection* connection, bool busy) {
    std::lock_guard<std::mutex> guard(mutex);
    const auto it = open.find(connection);
    if (it == open.end()) return;
    it->second.busy = busy;
    it->second.since = std::chrono::steady_clock::now();
}

/// Cuts the connections that have waited longer than request_timeout for a
/// whole request. libmicrohttpd's own timeout restarts with every byte, so a
/// drip of one byte a second would hold a connection (and its thread) for
/// ever. A shutdown makes the connection's thread see the end of the stream
/// and close it; the descriptor is still that connection's, since its CLOSED
/// notice (which removes it here, under the same lock) comes before its close.
void WebhookHttpServer::State::reap() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!ending) {
        changed.wait_for(lock, std::chrono::seconds(1));
        const auto now = std::chrono::steady_clock::now();
        for (auto& [connection, entry] : open) {
            if (entry.busy || entry.cut || now - entry.since < options.request_timeout) continue;
            ::shutdown(entry.fd, SHUT_RDWR);
            entry.cut = true;
        }
    }
}

/// libmicrohttpd refuses connections at its limit, so clients that trickle
/// bytes could take every slot until the reaper cuts them, and no sender
/// would get in meanwhile. The limit is set a little above max_connections:
/// past max_connections, each new connection cuts the one that has waited
/// longest for a request of its own (trickling, or idle between keep-alive
/// requests); one being answered is never cut.
void WebhookHttpServer::State::make_room() {
    std::size_t live = 0;
    OpenConnection* oldest = nullptr;
    for (auto& [connection, entry] : open) {
        if (entry.cut) continue;
        ++live;
        if (!entry.busy && (!oldest || entry.since < oldest->since)) oldest = &entry;
    }
    if (live <= options.max_connections || !oldest) return;
    ::shutdown(oldest->fd, SHUT_RDWR);
    oldest->cut = true;
}

webhook::Reply WebhookHttpServer::State::handle(MHD_Connection* connection, const char* method, const char* url,
                                                const Request& request) {
    webhook::IncomingRequest incoming;
    incoming.method = method;
    incoming.path = url;  // libmicrohttpd gives the path unescaped, without its query
    incoming.body = request.body;
    const char* type = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    incoming.content_type = type ? type : "";
    // Called on this connection's thread, inside its handler, as
    // libmicrohttpd requires; its lookup ignores case.
    incoming.header = [connection](std::string_view name) -> std::optional<std::string> {
        const std::string key(name);
        const char* value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, key.c_str());
        if (!value) return std::nullopt;
        return std::string(value);
    };
    return receiver->handle(incoming);
}

namespace {

/// libmicrohttpd calls this on the connection's thread: once when a
/// request's head has arrived, once per piece of its body, then once with
/// no body left.
MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url, const char* method,
                      const char* /*version*/, const char* upload_data, size_t* upload_data_size, void** req_cls) {
    auto& state = *static_cast<WebhookHttpServer::State*>(cls);
    auto* request = static_cast<Request*>(*req_cls);
    if (!request) {
        *req_cls = request = new Request;
        bool stopping;
        {
            std::lock_guard<std::mutex> guard(state.mutex);
            stopping = state.stopping;
        }
        if (stopping) {
            request->answered = true;
            return send_reply(connection, error_reply(503, "shutting down, try again", std::chrono::seconds(1)), true);
        }
        acknowledge_head_now(connection);
        request->limit = state.receiver->largest_body_bytes();
        // A body announced too large, or for which there is no room, is
        // refused before any of it is read.
        const char* length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (length) {
            const auto announced = static_cast<std::size_t>(std::strtoull(length, nullptr, 10));
            if (announced > request->limit) request->refusal = Request::Refusal::too_large;
            else if (!state.hold(*request, announced)) request->refusal = Request::Refusal::no_room;
            if (request->refusal != Request::Refusal::none) {
                request->answered = true;
                return send_reply(connection, refusal_reply(request->refusal), true);
            }
            request->body.reserve(announced);
        }
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        const std::size_t size = *upload_data_size;
        *upload_data_size = 0;
        if (request->refusal != Request::Refusal::none) return MHD_YES;  // dropped as it comes
        const std::size_t grown = request->body.size() + size;
        if (grown > request->limit) request->refusal = Request::Refusal::too_large;
        // A body without Content-Length holds twice what it had each time
        // it outgrows it (bounded by the limit): a budget check per doubling.
        else if (grown > request->held &&
                 !state.hold(*request, std::min(request->limit, std::max(grown, 2 * request->held))))
            request->refusal = Request::Refusal::no_room;
        if (request->refusal != Request::Refusal::none) {
            // libmicrohttpd (0.9.75) cannot answer before the body ends:
            // the rest is dropped as it comes, never held, and the answer
            // follows the body (within the request timeout).
            std::string().swap(request->body);
            state.release(*request);
            return MHD_YES;
        }
        request->body.append(upload_data, size);
        return MHD_YES;
    }
    if (request->answered) return MHD_YES;
    request->answered = true;
    if (request->refusal != Request::Refusal::none)
        return send_reply(connection, refusal_reply(request->refusal), true);
    state.set_busy(connection, true);
    request->handled = true;
    {
        std::lock_guard<std::mutex> guard(state.mutex);
        ++state.handling;
    }
    if (state.in_flight) state.in_flight(+1);
    webhook::Reply reply;
    try {
        reply = state.handle(connection, method, url, *request);
    } catch (const std::exception& e) {
        spdlog::error("webhook request {} {} failed: {}", method, url, e.what());
        reply = error_reply(500, "internal error");
    }
    if (state.in_flight) state.in_flight(-1);
    bool stopping;
    {
        std::lock_guard<std::mutex> guard(state.mutex);
        stopping = state.stopping;
    }
    // `handling` counts down once the answer is sent (on_completed): a stop
    // waits for that, not only for the commit.
    return send_reply(connection, reply, stopping);
}

/// A request is done with (answered, or its connection closing).
void on_completed(void* cls, MHD_Connection* connection, void** req_cls, MHD_RequestTerminationCode) {
    auto& state = *static_cast<WebhookHttpServer::State*>(cls);
    if (auto* request = static_cast<Request*>(*req_cls)) {
        state.release(*request);
        if (request->handled) {
            std::lock_guard<std::mutex> guard(state.mutex);
            --state.handling;
            state.changed.notify_all();
        }
    }
    delete static_cast<Request*>(*req_cls);
    *req_cls = nullptr;
    state.set_busy(connection, false);  // it waits for its next request from now
}

/// A connection accepted, or closing (before its descriptor is closed).
void on_connection(void* cls, MHD_Connection* connection, void** /*socket_context*/,
                   MHD_ConnectionNotificationCode code) {
    auto& state = *static_cast<WebhookHttpServer::State*>(cls);
    std::lock_guard<std::mutex> guard(state.mutex);
    if (code != MHD_CONNECTION_NOTIFY_STARTED) {
        state.open.erase(connection);
        return;
    }
    const MHD_ConnectionInfo* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!info) return;
    state.open[connection] = OpenConnection{info->connect_fd, false, false, std::chrono::steady_clock::now()};
    state.make_room();
}

}  // namespace

WebhookHttpServer::WebhookHttpServer(const std::string& address, webhook::WebhookReceiver& receiver, Options options,
                                     InFlight in_flight)
    : state_(std::make_unique<State>()) {
    state_->receiver = &receiver;
    state_->options = options;
    state_->in_flight = std::move(in_flight);
    const int listener = metrics::open_listener(address, "for webhooks");
    port_ = metrics::bound_port(listener);
    // A thread per connection: handle() blocks until the group commit.
    // MHD_USE_ITC lets stop() quiesce the daemon (stop accepting) while
    // the connections it has are answered.
    state_->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC, 0, nullptr, nullptr, &on_request,
        state_.get(), MHD_OPTION_LISTEN_SOCKET, static_cast<MHD_socket>(listener),              //
        MHD_OPTION_CONNECTION_TIMEOUT, static_cast<unsigned>(options.request_timeout.count()),  //
        MHD_OPTION_CONNECTION_LIMIT, options.max_connections + kHeadroom,                       //
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, options.max_head_bytes,                             //
        MHD_OPTION_NOTIFY_COMPLETED, &on_completed, state_.get(),                               //
        MHD_OPTION_NOTIFY_CONNECTION, &on_connection, state_.get(),                             //
        MHD_OPTION_END);
    // On failure the listener is left open: libmicrohttpd may have closed it
    // already, and a second close could hit a descriptor reused since.
    if (!state_->daemon) throw std::runtime_error("cannot start the webhook server on " + address);
    state_->reaper = std::thread([s = state_.get()] { s->reap(); });
}

void WebhookHttpServer::stop(std::chrono::milliseconds grace) {
    std::unique_lock<std::mutex> lock(state_->mutex);
    state_->stopping = true;
    if (!state_->quiesced) {
        state_->quiesced = true;
        lock.unlock();
        const MHD_socket listener = MHD_quiesce_daemon(state_->daemon);
        if (listener != MHD_INVALID_SOCKET) ::close(listener);
        lock.lock();
    }
    state_->changed.wait_for(lock, grace, [s = state_.get()] { return s->handling == 0; });
}

WebhookHttpServer::~WebhookHttpServer() {
    stop(std::chrono::seconds(30));
    {
        std::lock_guard<std::mutex> guard(state_->mutex);
        state_->ending = true;
    }
    state_->changed.notify_all();
    state_->reaper.join();
    MHD_stop_daemon(state_->daemon);  // closes every connection, joins their threads
}

}  // namespace tributary::receiver
