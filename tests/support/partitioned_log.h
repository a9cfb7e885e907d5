#pragma once

#include <string>
#include <vector>

#include "support/test_database.h"

namespace tributary::testing {

/// Transaction ids used one by one (one per committed transaction), so that
/// the log's later events land in later partitions.
void use_transaction_ids(const TestDatabase& db, int count);

/// The log recut for the test: the partitions `migrate` made ahead (wide and
/// empty) dropped, then `count` partitions of `width` transaction ids each,
/// from the end of events_0 on; transaction ids used up to that end.
void cut_into_small_partitions(const TestDatabase& db, int count, int width);

/// Every batch of at most `batch_size` events that consumer_next hands a
/// consumer of `group` until one comes back empty, each acked by the next
/// call: the keys of each batch.
std::vector<std::vector<std::string>> consume_all(const TestDatabase& db, const std::string& group,
                                                  int batch_size = 1000);

/// The partition an event of `source` with `key` is stored in ("" if none).
std::string partition_of(const TestDatabase& db, const std::string& source, const std::string& key);

}  // namespace tributary::testing
