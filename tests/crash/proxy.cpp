#include "proxy.h"

#include <regex>
#include <stdexcept>

#include "control_http.h"
#include "report.h"

namespace tributary::crash {

Proxy::Proxy(const std::string& binary, int target_port) {
    process_ = spawn({binary, "--listen-port", "0", "--target-host", "127.0.0.1", "--target-port",
                      std::to_string(target_port), "--control-port", "0"});
    const auto line = process_->first_line(std::chrono::seconds(10));
    // "listening on 127.0.0.1:LPORT control http://127.0.0.1:CPORT"
    std::smatch m;
    static const std::regex kListening(R"(listening on [0-9.]+:([0-9]+) control (http://[0-9.]+:[0-9]+))");
    if (!std::regex_search(line, m, kListening)) throw std::runtime_error("unexpected fault proxy line: " + line);
    listen_port_ = std::stoi(m[1]);
    control_url_ = m[2];
    say("fault proxy on port " + std::to_string(listen_port_) + " -> " + std::to_string(target_port) + ", control " +
        control_url_);
}

std::string Proxy::control(const std::string& path) const { return http_post(control_url_, path); }

std::string Proxy::stats() const { return http_get(control_url_, "/stats", 10); }

}  // namespace tributary::crash
