#pragma once

// The partitioned log under faults (issue 16): at setup the log is cut into
// partitions of a few seconds each, so that a run crosses tens of them while
// the maintainer (elected among the loaders) creates the coming ones; at the
// end the checker looks at how the events were spread and what the
// partitions' catalogue says. Reads the documented tables with its own SQL.

#include <string>
#include <vector>

#include "checker.h"

namespace tributary::crash {

class Cluster;

/// How small the log's partitions are cut for a crash run.
struct LogShape {
    /// log_settings.partition_span: how long a partition takes to fill.
    int partition_span_s = 3;
    /// log_settings.spans_ahead: spans kept ready beyond the current one.
    int spans_ahead = 3;
    /// The transaction ids of the first partitions, before the maintainer
    /// measured the rate (partition_width() never goes below 1 000).
    long first_width = 1000;
};

/// At setup, before any loader runs, as the log's owner: the settings above,
/// a first rate guess that makes partitions first_width wide, and the wide
/// partitions `migrate` created ahead (10 000 ids each: no rate was known)
/// dropped and made again by partitions_ahead() at that width.
void cut_log_small(const Cluster& cluster, const LogShape& shape);

/// What the partitions held at the end, and their catalogue's consistency.
struct PartitionCheck {
    CheckReport report;               ///< counts: default_partition_events, partition_catalogue, partition_sealed_early
    long partitions = 0;              ///< in the catalogue
    long partitions_with_events = 0;  ///< events_default not included
    long sealed = 0;
    long gaps = 0;  ///< transaction ids no partition covered (the default partition's)
    long long xids_used = 0;
    std::vector<std::string> figures;
};

/// Events per partition (the default partition must hold none), every
/// attached partition in the catalogue and back, and every sealed
/// partition's recorded sources covering the sources really in it (nothing
/// arrived after it was sealed). `min_partitions`: fewer partitions holding
/// events than this means the log did not roll over as the run meant it to.
/// On Citus (`citus`) a row's partition is named by its shard's table on the worker
/// (PARTITION_SHARDID), and the ids used are the fastest worker's.
PartitionCheck check_partitions(const std::string& db_url, long min_partitions, bool citus);

}  // namespace tributary::crash
