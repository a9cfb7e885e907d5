#pragma once

#include <atomic>

#include <httplib.h>

#include "event_generator.h"
#include "measured_pool.h"
#include "request_log.h"
#include "source_store.h"

namespace tributary::source_server {

struct ServerContext {
    SourceSet& sources;
    const EventGenerator& generator;
    RequestLog& log;
    const PoolStats& pool;
    const std::atomic<bool>& stopping;
};

// GET  /sources/NAME/events?after_id=A&limit=L   the source protocol (docs/design.md §3)
// GET  /_requests[?source=NAME]                  recorded event requests
// GET  /_truth/NAME                              every event of NAME, as served
// GET  /_stats                                   counters
// POST /_fault/NAME?mode=MODE                    set a source's fault mode
void install_routes(httplib::Server& server, ServerContext& context);

}  // namespace tributary::source_server
