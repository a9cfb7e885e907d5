#pragma once

#include <atomic>

#include <httplib.h>

#include "event_generator.h"
#include "measured_pool.h"
#include "oauth_issuer.h"
#include "rate_window.h"
#include "request_log.h"
#include "source_store.h"

namespace tributary::source_server {

struct ServerContext {
    SourceSet& sources;
    const EventGenerator& generator;
    RequestLog& log;
    const PoolStats& pool;
    const std::atomic<bool>& stopping;
    RateLimit rate_limit;  // per source, over style and fixture routes
    OAuthIssuer* oauth;    // null: style and fixture routes need no token
};

// GET  /sources/NAME/events?after_id=A&limit=L   the source protocol (docs/design.md §3)
// GET  /_requests[?source=NAME]                  recorded event requests
// GET  /styles/STYLE/NAME?...                    the generic paging styles (style_routes.h)
// GET  /github/..., /stripe/..., ...             six real APIs' shapes (fixture_routes.h)
// POST /oauth/token, POST /_oauth/revoke         OAuth2 client credentials (oauth_issuer.h)
// GET  /_truth/NAME[?style=STYLE]                every event of NAME, as served
// GET  /_stats                                   counters
// POST /_fault/NAME?mode=MODE                    set a source's fault mode
void install_routes(httplib::Server& server, ServerContext& context);

}  // namespace tributary::source_server
