#pragma once

#include <chrono>
#include <ctime>
#include <functional>
#include <optional>
#include <string>

namespace tributary {

/// A response header's value by name (case-insensitive; the first when it is
/// repeated), nothing when absent. Keeps libcurl out of the header readers.
using HeaderLookup = std::function<std::optional<std::string>(const char* name)>;

/// What a response's rate-limit headers say about the next request.
struct RateLimitWait {
    /// No request to this source before this has passed; zero when the limit
    /// is not spent (remaining above 0) or no header says.
    std::chrono::seconds wait{0};
    /// A header with an absurd value (negative, not a number, a reset beyond
    /// 24 h), clamped; for the log, once per response. Empty when all is sane.
    std::string note;
};

/// The longest a rate limit may hold a source back: a reset beyond it is
/// taken to be a mistake of the API's.
constexpr std::chrono::seconds kMaxRateLimitWait{24 * 60 * 60};

/// Values of `X-RateLimit-Reset` below this are a delta in seconds,
/// at or above it a Unix time: 10^9 s is September 2001, and no API's window
/// is 31 years long.
constexpr long long kUnixTimeFloor = 1'000'000'000;

/// Reads, in this order, the first family present:
///   RateLimit: "policy";r=0;t=30 (+ RateLimit-Policy: "policy";q=100;w=60)
///   RateLimit: limit=100, remaining=0, reset=30 (older IETF drafts)
///   RateLimit-Remaining: 0 + RateLimit-Reset: 30 (older IETF drafts, seconds)
///   X-RateLimit-Remaining: 0 + X-RateLimit-Reset: 1700000000 (GitHub: Unix
///   seconds; a value below kUnixTimeFloor: seconds from now)
/// Waits only when remaining is 0.
RateLimitWait rate_limit_wait(const HeaderLookup& header, std::time_t now);

}  // namespace tributary
