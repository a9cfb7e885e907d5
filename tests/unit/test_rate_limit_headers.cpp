#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "http/rate_limit_headers.h"

using namespace tributary;
using namespace std::chrono_literals;

namespace {

constexpr std::time_t kNow = 1'700'000'000;

RateLimitWait wait_with(const std::map<std::string, std::string>& headers) {
    return rate_limit_wait(
        [&headers](const char* name) -> std::optional<std::string> {
            const auto it = headers.find(name);
            if (it == headers.end()) return std::nullopt;
            return it->second;
        },
        kNow);
}

}  // namespace

TEST_CASE("GitHub: X-RateLimit-Reset in Unix seconds, only when remaining is 0", "[rate-limit]") {
    CHECK(wait_with({{"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "1700000042"}}).wait == 42s);
    CHECK(wait_with({{"X-RateLimit-Remaining", "1"}, {"X-RateLimit-Reset", "1700000042"}}).wait == 0s);
    // A reset already past: ask again now, nothing absurd about it.
    const auto past = wait_with({{"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "1699999990"}});
    CHECK(past.wait == 0s);
    CHECK(past.note.empty());
}

TEST_CASE("X-RateLimit-Reset below 10^9 is seconds from now", "[rate-limit]") {
    CHECK(wait_with({{"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "30"}}).wait == 30s);
    CHECK(wait_with({{"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "3600"}}).wait == 3600s);
}

TEST_CASE("older IETF draft: RateLimit-Remaining and RateLimit-Reset in seconds", "[rate-limit]") {
    CHECK(wait_with({{"RateLimit-Remaining", "0"}, {"RateLimit-Reset", "17"}}).wait == 17s);
    CHECK(wait_with({{"RateLimit-Remaining", "5"}, {"RateLimit-Reset", "17"}}).wait == 0s);
    CHECK(wait_with({{"RateLimit", "limit=100, remaining=0, reset=9"}}).wait == 9s);
}

TEST_CASE("structured RateLimit with RateLimit-Policy", "[rate-limit]") {
    CHECK(wait_with({{"RateLimit", "\"default\";r=0;t=30"}, {"RateLimit-Policy", "\"default\";q=100;w=60"}}).wait ==
          30s);
    CHECK(wait_with({{"RateLimit", "\"default\";r=3;t=30"}}).wait == 0s);
    // Two policies, one spent: its reset.
    CHECK(wait_with({{"RateLimit", "\"burst\";r=5;t=1, \"day\";r=0;t=3600"}}).wait == 3600s);
    // Spent without t: the policy's window is the most it can take.
    CHECK(wait_with({{"RateLimit", "\"default\";r=0"}, {"RateLimit-Policy", "\"default\";q=100;w=60"}}).wait == 60s);
}

TEST_CASE("absurd values are clamped to [0, 24 h] and noted", "[rate-limit]") {
    const auto negative = wait_with({{"RateLimit-Remaining", "0"}, {"RateLimit-Reset", "-5"}});
    CHECK(negative.wait == 0s);
    CHECK_FALSE(negative.note.empty());

    const auto far = wait_with({{"RateLimit-Remaining", "0"}, {"RateLimit-Reset", "999999999"}});
    CHECK(far.wait == 24h);
    CHECK(far.note.find("clamped") != std::string::npos);

    const auto far_epoch = wait_with({{"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "1900000000"}});
    CHECK(far_epoch.wait == 24h);
    CHECK_FALSE(far_epoch.note.empty());

    const auto garbage = wait_with({{"X-RateLimit-Remaining", "0"}, {"X-RateLimit-Reset", "soon"}});
    CHECK(garbage.wait == 0s);
    CHECK(garbage.note.find("not a number") != std::string::npos);

    const auto remaining_garbage = wait_with({{"X-RateLimit-Remaining", "lots"}, {"X-RateLimit-Reset", "30"}});
    CHECK(remaining_garbage.wait == 0s);
    CHECK_FALSE(remaining_garbage.note.empty());

    const auto huge = wait_with({{"RateLimit", "\"p\";r=0;t=99999999999999999999999"}});
    CHECK(huge.wait == 0s);
    CHECK_FALSE(huge.note.empty());
}

TEST_CASE("no rate-limit headers: no wait, no note", "[rate-limit]") {
    const auto none = wait_with({{"Content-Type", "application/json"}});
    CHECK(none.wait == 0s);
    CHECK(none.note.empty());
}
