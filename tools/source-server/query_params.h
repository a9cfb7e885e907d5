#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <httplib.h>

namespace tributary::source_server {

std::optional<std::int64_t> parse_int(const std::string& text);

// A query parameter that must be an integer in [lo, hi] when present.
struct IntParam {
    bool present = false;
    bool valid = true;
    std::int64_t value = 0;  // the fallback when absent
};
IntParam int_param(const httplib::Request& req, const char* name, std::int64_t fallback, std::int64_t lo,
                   std::int64_t hi);

// A page size: an integer >= 1 (400 otherwise), `fallback` when absent, capped at `cap`.
std::optional<std::int64_t> page_size_param(const httplib::Request& req, const char* name, std::int64_t fallback,
                                            std::int64_t cap);

// {"error":MESSAGE} with `status`.
void json_error(httplib::Response& res, int status, const std::string& message);

// "http://HOST[:PORT]" from the Host header, for the absolute URLs of next links.
std::string origin_of(const httplib::Request& req);
// The query string asked ("" when none), as it came.
std::string query_of(const httplib::Request& req);

}  // namespace tributary::source_server
