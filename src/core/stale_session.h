#pragma once

#include <utility>

#include "errors.h"

namespace tributary {

/// Runs `call`, and once more at once if it threw DatabaseUnavailable: a
/// session left idle through a database restart fails on its first use and
/// reconnects on the next (PostgresSession does), which is no outage worth
/// a log line or a backoff. A database that is really away fails the second
/// call too, and that DatabaseUnavailable propagates. Only for calls whose
/// repetition is harmless (reads, heartbeats; an ack whose first try
/// committed is refused the second time, which callers already treat as
/// "settled elsewhere").
template <typename Call>
auto retry_stale_session(Call&& call) -> decltype(call()) {
    try {
        return call();
    } catch (const DatabaseUnavailable&) {
        return call();
    }
}

}  // namespace tributary
