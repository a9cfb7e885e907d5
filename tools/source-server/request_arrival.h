#pragma once

#include <cstdint>

namespace tributary::source_server {

// When did a request arrive? httplib hands each accepted connection to a pool thread,
// which then serves every request on it. Normally a request is stamped the moment the
// worker has read it (the pre-routing hook, before any routing). But when every worker
// was busy, a new connection's first request sat in the queue: it is stamped with the
// time the connection was accepted instead, so queueing never makes arrivals look later
// (or closer together) than they were.

// Pool side: the connection about to be served on this thread was accepted at
// `accepted_us` and waited for a worker.
void connection_waited(std::int64_t accepted_us);
// Pool side: this thread is done with its connection.
void connection_finished();

// Server side, once per request, as early as possible: stamps and returns the arrival time.
std::int64_t stamp_request_arrival();
// Server side: the stamp of the request being handled on this thread.
std::int64_t request_arrival_us();

}  // namespace tributary::source_server
