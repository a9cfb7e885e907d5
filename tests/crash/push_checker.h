#pragma once

// The pushed sources' check (issue 15), independent like the pulled one: the
// sender's record against tributary.events read with the checker's own SQL.
// Every acknowledged key stored (else lost), each key once and no event
// under two keys (duplicated), nothing stored that was never sent
// (stored_never_sent), payloads equal to what was sent as JSON values
// (payload_mismatch), and each lane's events in the order it sent them
// (out_of_order: a lane sends a request only once the previous one is
// acknowledged, so its events' seq must rise).

#include <map>
#include <string>

#include "checker.h"
#include "sender.h"

namespace tributary::crash {

/// Counts under the style "pushed"; events_checked is the acknowledged keys.
CheckReport check_pushed(const std::string& db_url, const std::map<std::string, SentEvents>& sent);

}  // namespace tributary::crash
