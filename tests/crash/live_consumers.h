#pragma once

// Consumers of a group of lanes (issue 28) reading the log while the loaders
// write it, under the same faults: `tributary consume GROUP --consumer NAME
// --exec CMD` processes, supervised like the loaders, consumer 0 connected
// directly and the others through the fault proxy. Each batch's command
// appends a stamp line and the batch's NDJSON to a file of its consumer's
// incarnation, which live_group_check reads after everything stopped.

#include <chrono>
#include <string>
#include <vector>

#include "supervisor.h"

namespace tributary::crash {

class Cluster;
class Proxy;
class Tally;

/// The group the live consumers read: 4 lanes, from the beginning of the log.
extern const char* const kLiveGroup;

/// Creates the group before any loader starts, so that it is handed every event.
void create_live_group(const Cluster& cluster);

/// `count` consumers named crash-consumer-N (their application_name), each
/// recording what it is handed under `record_dir`.
std::vector<ProcessSpec> live_consumer_specs(int count, const Cluster& cluster, const Proxy* proxy,
                                             const std::string& record_dir);

/// The consumers' supervisor: plain tributary (no fault points), ready once it says it is consuming.
SupervisorConfig live_consumer_config(const std::string& tributary_bin, const std::string& log_dir);

/// Where note_batches_in_hand writes, under the record directory.
extern const char* const kInHandNotes;

/// Called right after consumer `consumer` was SIGSTOPped, to be resumed
/// later: notes the batches it holds, with the time. Stopped between a read
/// and its command, it records such a batch only when it wakes up, after
/// its lane moved on to another consumer that was handed the next events of
/// the same sources meanwhile; the note says it was handed first. False
/// (nothing noted) when the database could not say: the caller resumes it at once.
bool note_batches_in_hand(const Cluster& cluster, const std::string& consumer, const std::string& record_dir);

/// After the loaders drained: waits until the group has nothing behind, in
/// flight or waiting for a retry. A wait longer than `timeout` is a
/// drain_timeout. Returns the seconds it took.
double drain_live_group(const Cluster& cluster, Tally& tally, std::chrono::seconds timeout);

}  // namespace tributary::crash
