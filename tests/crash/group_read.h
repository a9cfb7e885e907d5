#pragma once

// One consumer group reading the whole log at the end of a run, through the
// documented SQL surface (group_create, consumer_next): it must be handed
// every stored event once, in the log's order (tx_id, seq), across all the
// partitions the run rolled over. Then a group of 4 lanes (issue 28), read by
// two consumers in turn: every event once, each source's in the log's order.

#include <string>

#include "checker.h"

namespace tributary::crash {

/// Counts group_lost, group_duplicated and group_out_of_order; events_checked
/// is the events in the log, events_stored those the group was handed.
/// On Citus (`lanes_by_shard`), every group has a lane per shard, whose
/// order is the order within each source: both groups are checked per source.
CheckReport read_as_group(const std::string& db_url, bool lanes_by_shard);

}  // namespace tributary::crash
