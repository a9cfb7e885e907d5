#include "request_arrival.h"

#include "wall_clock.h"

namespace tributary::source_server {
namespace {

thread_local std::int64_t t_waited_accept_us = 0;  // pending for the connection's first request
thread_local std::int64_t t_arrival_us = 0;

}  // namespace

void connection_waited(std::int64_t accepted_us) { t_waited_accept_us = accepted_us; }

void connection_finished() { t_waited_accept_us = 0; }

std::int64_t stamp_request_arrival() {
    std::int64_t now = realtime_us();
    t_arrival_us = t_waited_accept_us != 0 ? t_waited_accept_us : now;
    t_waited_accept_us = 0;
    return t_arrival_us;
}

std::int64_t request_arrival_us() { return t_arrival_us != 0 ? t_arrival_us : realtime_us(); }

}  // namespace tributary::source_server
