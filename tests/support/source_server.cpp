#include "support/source_server.h"

#include <stdexcept>

#include <httplib.h>

namespace tributary::testing {

SourceServer::SourceServer(const std::vector<std::string>& options) {
    std::vector<std::string> argv{TRIBUTARY_SOURCE_SERVER_BIN, "--port", "0"};
    argv.insert(argv.end(), options.begin(), options.end());
    process_ = std::make_unique<ChildProcess>(argv);
    const std::string line = process_->first_line(std::chrono::seconds(10));
    const std::string prefix = "listening on ";
    if (line.rfind(prefix, 0) != 0) throw std::runtime_error("unexpected source server line: " + line);
    base_url_ = line.substr(prefix.size());
    const auto host_start = base_url_.find("://") + 3;
    const auto colon = base_url_.rfind(':');
    host_ = base_url_.substr(host_start, colon - host_start);
    port_ = std::stoi(base_url_.substr(colon + 1));
}

std::string SourceServer::get_text(const std::string& path) const {
    httplib::Client client(host_, port_);
    client.set_read_timeout(30, 0);
    const auto response = client.Get(path.c_str());
    if (!response || response->status != 200) throw std::runtime_error("source server GET " + path + " failed");
    return response->body;
}

nlohmann::json SourceServer::get(const std::string& path) const { return nlohmann::json::parse(get_text(path)); }

nlohmann::json SourceServer::truth(const std::string& source) const { return get("/_truth/" + source); }

std::string SourceServer::truth_text(const std::string& source, const std::string& style) const {
    return get_text("/_truth/" + source + "?style=" + style);
}

nlohmann::json SourceServer::stats() const { return get("/_stats"); }

void SourceServer::revoke_tokens() const {
    httplib::Client client(host_, port_);
    const auto response = client.Post("/_oauth/revoke");
    if (!response || response->status != 200) throw std::runtime_error("cannot revoke the OAuth2 tokens");
}

nlohmann::json SourceServer::requests(const std::string& source) const { return get("/_requests?source=" + source); }

void SourceServer::set_fault(const std::string& source, const std::string& mode) const {
    httplib::Client client(host_, port_);
    const auto response = client.Post(("/_fault/" + source + "?mode=" + mode).c_str());
    if (!response || response->status != 200) throw std::runtime_error("cannot set fault " + mode + " on " + source);
}

}  // namespace tributary::testing
