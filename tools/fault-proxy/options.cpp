#include "options.h"

#include <charconv>
#include <optional>
#include <string_view>

#include "common/long_options.h"

namespace tributary::fault_proxy {
namespace {

std::optional<int> parse_port(std::string_view text, int lo) {
    int value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end || value < lo || value > 65535) return std::nullopt;
    return value;
}

}  // namespace

std::string usage_text() {
    return "usage: tributary-fault-proxy --target-port PORT [--target-host 127.0.0.1] [--listen-port 0]\n"
           "                             [--control-port 0] [--verbose] [--help]\n"
           "A TCP proxy in front of PostgreSQL that injects network faults on command.\n"
           "\n"
           "  --listen-port PORT     port for clients on 127.0.0.1, 0 = pick a free one (default 0)\n"
           "  --target-host HOST     PostgreSQL host (default 127.0.0.1)\n"
           "  --target-port PORT     PostgreSQL port (required)\n"
           "  --control-port PORT    HTTP control API on 127.0.0.1, 0 = pick a free one (default 0)\n"
           "  --verbose              also log every connection opened and closed (stderr)\n"
           "  --help                 show this text\n"
           "\n"
           "On start prints one line to stdout:\n"
           "  listening on 127.0.0.1:LISTENPORT control http://127.0.0.1:CONTROLPORT\n"
           "Control API (all POST but /stats): /cut, /cut-after-commit?count=N, /delay?ms=D,\n"
           "/blackhole?on=1|0, /refuse?on=1|0, /heal, GET /stats. See README.md.\n";
}

ParseResult parse_options(int argc, const char* const* argv) {
    ParseResult result;
    Options& o = result.options;
    bool have_target_port = false;
    result.error =
        tools::walk_long_options(argc, argv, {"--listen-port", "--target-host", "--target-port", "--control-port"},
                                 o.help, o.verbose, [&](const std::string& name, const std::string& v) -> std::string {
                                     if (name == "--target-host") {
                                         if (v.empty()) return "--target-host must not be empty";
                                         o.target_host = v;
                                         return {};
                                     }
                                     const int lo = name == "--target-port" ? 1 : 0;
                                     auto port = parse_port(v, lo);
                                     if (!port) {
                                         return "invalid value '" + v + "' for " + name +
                                                ": expected an integer from " + std::to_string(lo) + " to 65535";
                                     }
                                     if (name == "--listen-port") {
                                         o.listen_port = *port;
                                     } else if (name == "--control-port") {
                                         o.control_port = *port;
                                     } else {
                                         o.target_port = *port;
                                         have_target_port = true;
                                     }
                                     return {};
                                 });
    if (result.error.empty() && !o.help && !have_target_port) result.error = "--target-port is required";
    return result;
}

}  // namespace tributary::fault_proxy
