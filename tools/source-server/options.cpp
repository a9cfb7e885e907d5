#include "options.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "common/long_options.h"

namespace tributary::source_server {
namespace {

constexpr std::int64_t kMaxSources = 1000000;
constexpr std::size_t kMaxPayloadBytes = 16 * 1024 * 1024;
constexpr int kMaxThreads = 4096;
constexpr std::int64_t kMaxRateLimit = 1000000000;
constexpr std::int64_t kMaxWindowMs = 1000000000;
constexpr std::size_t kMaxNameLength = 100;  // docs/design.md §2

std::optional<std::int64_t> parse_int(std::string_view text) {
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
    return value;
}

std::optional<double> parse_double(const std::string& text) {
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(value)) return std::nullopt;
    return value;
}

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

// True when `name` is PREFIX + decimal index < sources (the way source_name() spells it).
bool is_source_name(const Options& o, const std::string& name) {
    if (name.compare(0, o.prefix.size(), o.prefix) != 0 || name.size() == o.prefix.size()) return false;
    std::string_view digits(name);
    digits.remove_prefix(o.prefix.size());
    if (digits.size() > 1 && digits[0] == '0') return false;
    auto index = parse_int(digits);
    return index && *index >= 0 && *index < o.sources && digits[0] != '-' && digits[0] != '+';
}

}  // namespace

std::string source_name(const Options& options, std::int64_t index) { return options.prefix + std::to_string(index); }

std::string usage_text() {
    return "usage: tributary-source-server [options]\n"
           "Plays many HTTP event sources (GET /sources/NAME/events?after_id=A&limit=L).\n"
           "\n"
           "  --host HOST            address to listen on (default 127.0.0.1)\n"
           "  --port PORT            port, 0 = pick a free one (default 0)\n"
           "  --sources N            number of sources PREFIX0 .. PREFIX{N-1} (default 1)\n"
           "  --prefix PREFIX        source name prefix, [A-Za-z0-9._-]* (default demo.src-)\n"
           "  --backlog E            events each source holds at start, ids 1..E (default 100)\n"
           "  --rate R               events per second each source produces afterwards (default 0)\n"
           "  --max-events M         stop producing once a source holds M events, 0 = no cap (default 0)\n"
           "  --payload-bytes B      approximate size of each event payload (default 200)\n"
           "  --fault NAME=MODE      start source NAME in fault MODE (repeatable)\n"
           "  --rate-limit N         style and fixture requests per window per source, 0 = off (default 0)\n"
           "  --rate-window-ms W     the rate-limit window (default 1000)\n"
           "  --oauth-client ID:SECRET  require OAuth2 client-credentials bearer tokens on style routes\n"
           "  --oauth-expires-s N    lifetime of an issued token (default 3600)\n"
           "  --threads T            HTTP worker threads; every open connection holds one (default 8)\n"
           "  --verbose              log every request to stderr\n"
           "  --help                 show this text\n"
           "\n"
           "Fault modes: " +
           fault_mode_list() +
           "\n"
           "\n"
           "On start prints one line to stdout: listening on http://HOST:PORT\n"
           "Style routes: /styles/{after-key,cursor,link,time,page,offset}/NAME; fixtures under /github,\n"
           "/stripe, /shopify, /slack, /zendesk, /hubspot (see README.md).\n"
           "Control endpoints: GET /_requests[?source=NAME], GET /_truth/NAME[?style=STYLE], GET /_stats,\n"
           "POST /_fault/NAME?mode=MODE, POST /_oauth/revoke.\n";
}

ParseResult parse_options(int argc, const char* const* argv) {
    ParseResult result;
    Options& o = result.options;
    auto fail = [&](std::string message) {
        result.error = std::move(message);
        return result;
    };
    std::vector<std::pair<std::string, std::string>> fault_args;

    result.error = tools::walk_long_options(
        argc, argv,
        {"--host", "--port", "--sources", "--prefix", "--backlog", "--rate", "--max-events", "--payload-bytes",
         "--fault", "--threads", "--rate-limit", "--rate-window-ms", "--oauth-client", "--oauth-expires-s"},
        o.help, o.verbose, [&](const std::string& name, const std::string& v) -> std::string {
            auto int_in = [&](std::int64_t lo, std::int64_t hi) -> std::optional<std::int64_t> {
                auto n = parse_int(v);
                if (!n || *n < lo || *n > hi) return std::nullopt;
                return n;
            };
            auto range_error = [&](std::int64_t lo, std::int64_t hi) {
                return "invalid value '" + v + "' for " + name + ": expected an integer from " + std::to_string(lo) +
                       " to " + std::to_string(hi);
            };

            if (name == "--host") {
                if (v.empty()) return "--host must not be empty";
                o.host = v;
            } else if (name == "--port") {
                auto n = int_in(0, 65535);
                if (!n) return range_error(0, 65535);
                o.port = static_cast<int>(*n);
            } else if (name == "--sources") {
                auto n = int_in(0, kMaxSources);
                if (!n) return range_error(0, kMaxSources);
                o.sources = *n;
            } else if (name == "--prefix") {
                for (char c : v) {
                    if (!is_name_char(c)) return "invalid --prefix '" + v + "': only [A-Za-z0-9._-] allowed";
                }
                o.prefix = v;
            } else if (name == "--backlog") {
                auto n = int_in(0, std::int64_t{1} << 40);
                if (!n) return range_error(0, std::int64_t{1} << 40);
                o.backlog = *n;
            } else if (name == "--rate") {
                auto r = parse_double(v);
                if (!r || *r < 0 || *r > 1e7)
                    return "invalid value '" + v + "' for --rate: expected a number from 0 to 1e7";
                o.rate = *r;
            } else if (name == "--max-events") {
                auto n = int_in(0, std::int64_t{1} << 40);
                if (!n) return range_error(0, std::int64_t{1} << 40);
                o.max_events = *n;
            } else if (name == "--payload-bytes") {
                auto n = int_in(0, kMaxPayloadBytes);
                if (!n) return range_error(0, kMaxPayloadBytes);
                o.payload_bytes = static_cast<std::size_t>(*n);
            } else if (name == "--threads") {
                auto n = int_in(1, kMaxThreads);
                if (!n) return range_error(1, kMaxThreads);
                o.threads = static_cast<int>(*n);
            } else if (name == "--rate-limit") {
                auto n = int_in(0, kMaxRateLimit);
                if (!n) return range_error(0, kMaxRateLimit);
                o.rate_limit = *n;
            } else if (name == "--rate-window-ms") {
                auto n = int_in(1, kMaxWindowMs);
                if (!n) return range_error(1, kMaxWindowMs);
                o.rate_window_ms = *n;
            } else if (name == "--oauth-client") {
                auto colon = v.find(':');
                if (colon == std::string::npos || colon == 0 || colon + 1 == v.size())
                    return "invalid --oauth-client '" + v + "': expected ID:SECRET";
                o.oauth_client_id = v.substr(0, colon);
                o.oauth_client_secret = v.substr(colon + 1);
            } else if (name == "--oauth-expires-s") {
                auto n = int_in(1, kMaxWindowMs);
                if (!n) return range_error(1, kMaxWindowMs);
                o.oauth_expires_s = *n;
            } else if (name == "--fault") {
                auto eq = v.rfind('=');
                if (eq == std::string::npos || eq == 0) return "invalid --fault '" + v + "': expected NAME=MODE";
                fault_args.emplace_back(v.substr(0, eq), v.substr(eq + 1));
            }
            return {};
        });
    if (!result.error.empty() || o.help) return result;

    // Checked last: they depend on --prefix and --sources wherever those appear.
    if (o.prefix.size() + std::to_string(o.sources > 0 ? o.sources - 1 : 0).size() > kMaxNameLength) {
        return fail("--prefix too long: source names must be at most 100 characters");
    }
    for (auto& [source, mode_text] : fault_args) {
        auto mode = parse_fault_mode(mode_text);
        if (!mode) return fail("unknown fault mode '" + mode_text + "' (modes: " + fault_mode_list() + ")");
        if (!is_source_name(o, source)) {
            if (o.sources == 0) return fail("--fault names unknown source '" + source + "' (there are no sources)");
            return fail("--fault names unknown source '" + source + "' (sources are " + o.prefix + "0 .. " + o.prefix +
                        std::to_string(o.sources - 1) + ")");
        }
        o.faults.push_back({source, *mode});
    }
    return result;
}

}  // namespace tributary::source_server
