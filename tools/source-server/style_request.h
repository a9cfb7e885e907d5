#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <httplib.h>

#include "routes.h"

namespace tributary::source_server {

// What a style or fixture handler works with, once the request got past the guards.
struct StyleCall {
    Source& source;
    const EventGenerator& generator;
    const httplib::Request& req;
    httplib::Response& res;
    FaultMode fault;  // the source's mode when the request arrived
    std::int64_t now_us;
};

// Fills call.res and returns how many records the body was built from.
using StyleHandler = std::function<std::int64_t(StyleCall& call)>;

// Everything style and fixture routes share, in this order: 404 for an unknown source, 401
// without a valid bearer token (--oauth-client), 429 over the rate limit (--rate-limit; the
// headers go on every answer), the HTTP-status fault modes, then `handler`; ratelimit-absurd
// rewrites the headers last. Every request goes into /_requests with its style and query.
void serve_style_request(ServerContext& ctx, const httplib::Request& req, httplib::Response& res,
                         const std::string& style, const std::string& source_name, const StyleHandler& handler);

}  // namespace tributary::source_server
