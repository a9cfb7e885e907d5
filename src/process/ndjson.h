#pragma once

#include <string>

#include "core/leased_batch.h"

namespace tributary::process {

/// The batch as NDJSON, one line per event:
/// {"seq":1,"source":"orders.eu","event_id":7,"event_key":"7","payload":<as stored>,"delivery":1}
/// event_id is null for an event of a source keyed by text; event_key is
/// every event's key as a JSON string.
/// The payload's text is inserted as the database returned it (never parsed
/// and re-serialised: every digit of a number survives).
std::string batch_ndjson(const LeasedBatch& batch);

}  // namespace tributary::process
