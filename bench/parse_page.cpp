// tributary-bench-parse: how fast today's protocol is parsed, in events per second.
//
//   tributary-bench-parse [ROUNDS]
//
// Parses 100 bodies of 1000 events of about 250 bytes each (100 000 events) with
// parse_owned_batch(), ROUNDS times (default 20), and prints the best and the median
// round. Written against parse_owned_batch() so that the same file measures the parser
// before and after a change (issue 13: the configurable layout must keep this speed).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "http/batch_parser.h"

namespace {

std::string body_of(std::int64_t first_id, int events) {
    std::string body = R"({"events":[)";
    for (int i = 0; i < events; ++i) {
        const std::string id = std::to_string(first_id + i);
        if (i > 0) body += ',';
        body += R"({"id":)" + id + R"(,"payload":{"user":"user-)" + std::to_string(i % 97) +
                R"(","action":"page_view","at":"2024-05-01T12:34:56.789Z","props":{"path":"/products/)" + id +
                R"(","referrer":"https://example.com/search?q=shoes","duration_ms":)" + std::to_string(i * 7 % 5000) +
                R"(,"tags":["a","b","c"]},"note":"caf\u00e9 \"quoted\" text, 0123456789"}})";
    }
    return body + R"(],"remaining":0})";
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
    constexpr int kBodies = 100, kEvents = 1000;
    std::vector<std::string> bodies;
    for (int b = 0; b < kBodies; ++b) bodies.push_back(body_of(std::int64_t{b} * kEvents + 1, kEvents));
    const tributary::FetchLimits limits;
    std::vector<double> seconds;
    std::size_t bytes = 0;
    for (const auto& body : bodies) bytes += body.size();
    for (int r = 0; r < rounds; ++r) {
        std::size_t parsed = 0;
        const auto start = std::chrono::steady_clock::now();
        for (int b = 0; b < kBodies; ++b) {
            const auto result =
                tributary::parse_owned_batch(std::string(bodies[b]), std::int64_t{b} * kEvents, kEvents, limits);
            parsed += result.events.size();
        }
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (parsed != static_cast<std::size_t>(kBodies * kEvents)) {
            std::fprintf(stderr, "parsed %zu events, expected %d\n", parsed, kBodies * kEvents);
            return 1;
        }
    }
    std::sort(seconds.begin(), seconds.end());
    const double events = kBodies * kEvents;
    std::printf("events=%d bytes_per_event=%zu best_events_per_s=%.0f median_events_per_s=%.0f best_mb_per_s=%.1f\n",
                kBodies * kEvents, bytes / static_cast<std::size_t>(events), events / seconds.front(),
                events / seconds[seconds.size() / 2], static_cast<double>(bytes) / seconds.front() / 1e6);
}
