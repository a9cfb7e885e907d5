#include "options.h"

#include <charconv>
#include <optional>
#include <string_view>

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
  auto fail = [&](std::string message) {
    result.error = std::move(message);
    return result;
  };
  bool have_target_port = false;

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      return result;
    }
    if (arg == "--verbose" || arg == "-v") {
      o.verbose = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0) return fail("unexpected argument '" + arg + "'");

    std::string name = arg;
    std::optional<std::string> value;
    if (auto eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    }
    if (name != "--listen-port" && name != "--target-host" && name != "--target-port" &&
        name != "--control-port") {
      return fail("unknown option '" + name + "'");
    }
    if (!value) {
      if (i + 1 >= argc) return fail("option " + name + " needs a value");
      value = argv[++i];
    }
    const std::string& v = *value;

    if (name == "--target-host") {
      if (v.empty()) return fail("--target-host must not be empty");
      o.target_host = v;
      continue;
    }
    const int lo = name == "--target-port" ? 1 : 0;
    auto port = parse_port(v, lo);
    if (!port) {
      return fail("invalid value '" + v + "' for " + name + ": expected an integer from " + std::to_string(lo) +
                  " to 65535");
    }
    if (name == "--listen-port") {
      o.listen_port = *port;
    } else if (name == "--control-port") {
      o.control_port = *port;
    } else {
      o.target_port = *port;
      have_target_port = true;
    }
  }
  if (!have_target_port) return fail("--target-port is required");
  return result;
}

}  // namespace tributary::fault_proxy
