#include "console_http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "metrics/metrics_server.h"

namespace tributary::console {

namespace {

ConsoleRequest console_request(const httplib::Request& req) {
    ConsoleRequest request;
    request.method = req.method;
    request.path = req.path;  // cpp-httplib has decoded it and cut the query off
    for (const auto& [name, value] : req.params) request.query.emplace(name, value);
    for (const auto& [name, value] : req.headers) {
        std::string lower = name;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        request.headers.emplace(std::move(lower), value);  // the first of repeated headers
    }
    request.body = req.body;
    request.peer = req.remote_addr;
    return request;
}

void answer(const ConsoleResponse& response, httplib::Response& res) {
    res.status = response.status;
    for (const auto& [name, value] : response.headers) res.set_header(name, value);
    if (!response.stream) {
        res.set_content(response.body, response.content_type.c_str());
        return;
    }
    // The tail runs on this connection's thread, a step per call, so that
    // cpp-httplib sees a stop between steps.
    auto stream = response.stream;
    res.set_chunked_content_provider(response.content_type, [stream](std::size_t, httplib::DataSink& sink) {
        const bool going = stream->step(
            [&sink](std::string_view text) {
                return !text.empty() && sink.write(text.data(), text.size());  // empty would end the stream
            },
            [&sink] { return sink.is_writable(); });
        if (!going) sink.done();
        return true;
    });
}

/// cpp-httplib's own answers (a bad request line, a body too large) in the
/// console's form: a JSON error and the security headers.
httplib::Server::HandlerResponse own_error(const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty() || res.has_header("Content-Type")) return httplib::Server::HandlerResponse::Unhandled;
    const std::string error = res.status == 413 ? "request body too large" : "bad request";
    res.set_content(nlohmann::json{{"error", error}}.dump(), "application/json");
    for (const auto& [name, value] : security_headers(req.path)) res.set_header(name, value);
    return httplib::Server::HandlerResponse::Handled;
}

}  // namespace

ConsoleHttpServer::ConsoleHttpServer(const std::string& address, const ConsoleApi& api, Options options)
    : server_(std::make_unique<httplib::Server>()) {
    const auto [host, port] = metrics::split_address(address);
    auto& server = *server_;
    const auto serve = [&api](const httplib::Request& req, httplib::Response& res) {
        answer(api.handle(console_request(req)), res);
    };
    const httplib::Server::Handler handler = serve;
    server.Get(".*", handler).Post(".*", handler).Put(".*", handler).Delete(".*", handler);
    server.Patch(".*", handler).Options(".*", handler);
    server.set_error_handler(httplib::Server::HandlerWithResponse(own_error));
    server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        res.status = 500;
        res.set_content(R"({"error":"internal error: see the console's log"})", "application/json");
    });
    const int threads = options.threads;
    server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
    server.set_payload_max_length(options.max_body_bytes);
    server.set_read_timeout(options.read_timeout);
    server.set_write_timeout(options.write_timeout);
    // SO_REUSEADDR only: cpp-httplib's default also sets SO_REUSEPORT, with
    // which a second console would share a port taken rather than fail.
    // TCP_NODELAY (the connections inherit it from the listening socket):
    // cpp-httplib writes an answer's head and body apart, and without it the
    // body waited for the head's acknowledgement, which the browser delays
    // up to 40 ms: 40 ms added to every page's request (bench/console).
    server.set_socket_options([](socket_t sock) {
        const int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
    });
    errno = 0;
    if (port == 0) {
        port_ = server.bind_to_any_port(host);
    } else {
        port_ = server.bind_to_port(host, port) ? port : -1;
    }
    if (port_ < 0) {
        const int error = errno;
        throw std::runtime_error("cannot listen on " + address +
                                 (error ? std::string(": ") + std::strerror(error) : std::string()));
    }
    thread_ = std::thread([&server] { server.listen_after_bind(); });
}

void ConsoleHttpServer::stop() {
    server_->stop();
    if (thread_.joinable()) thread_.join();
}

ConsoleHttpServer::~ConsoleHttpServer() { stop(); }

}  // namespace tributary::console
