#pragma once

#include <stdexcept>
#include <string_view>
#include <vector>

#include "core/leased_batch.h"

namespace tributary::postgres {

/// The text is not the events array consumer_next prints: a bug or a
/// mismatch of versions, not a routine failure.
class MalformedBatchJson : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The events of a batch from consumer_next's `events` (sql/api/
/// 42_consumer_next.sql): a JSON array with an object per event, members
/// seq, source, event_id, event_key, payload (and delivery, which is the
/// batch's). Each payload is the exact bytes PostgreSQL printed, cut out of
/// the text, never parsed into numbers (a 30-digit integer stays as it is);
/// source and event_key are decoded. One pass of the strict JSON reader,
/// which also checks the text is JSON. Throws MalformedBatchJson.
std::vector<LoggedEvent> read_batch_events(std::string_view json);

}  // namespace tributary::postgres
