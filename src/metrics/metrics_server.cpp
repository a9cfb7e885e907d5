#include "metrics_server.h"

#include <stdexcept>

#include <httplib.h>

namespace tributary::metrics {

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

MetricsServer::MetricsServer(const std::string& address, std::function<std::string()> scrape,
                             std::function<Health()> health, NudgeHandler nudge)
    : server_(std::make_unique<httplib::Server>()) {
    if (nudge) {
        // Names that cannot be a source's fall through to httplib's 404.
        server_->Post(R"(/sources/([A-Za-z0-9._-]{1,100})/nudge)",
                      [nudge](const httplib::Request& req, httplib::Response& res) {
                          const std::string name = req.matches[1];
                          switch (nudge(name)) {
                              case NudgeOutcome::nudged:
                                  res.set_content("nudged " + name + "\n", "text/plain; charset=utf-8");
                                  return;
                              case NudgeOutcome::unknown_source:
                                  res.status = 404;
                                  res.set_content("no source named " + name + "\n", "text/plain; charset=utf-8");
                                  return;
                              case NudgeOutcome::unavailable:
                                  res.status = 503;
                                  res.set_content("database unreachable, try again\n", "text/plain; charset=utf-8");
                                  return;
                          }
                      });
    }
    server_->Get("/metrics", [scrape](const httplib::Request&, httplib::Response& res) {
        res.set_content(scrape(), "text/plain; version=0.0.4; charset=utf-8");
    });
    server_->Get("/healthz", [health](const httplib::Request&, httplib::Response& res) {
        const Health h = health();
        res.status = h.healthy ? 200 : 503;
        res.set_content(h.healthy ? "ok\n" : h.reason + "\n", "text/plain; charset=utf-8");
    });
    const auto [host, port] = split_address(address);
    port_ = port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
    if (port_ < 0) throw std::runtime_error("cannot listen on " + address + " for metrics: is the port in use?");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
}

MetricsServer::~MetricsServer() {
    server_->stop();
    thread_.join();
}

}  // namespace tributary::metrics
