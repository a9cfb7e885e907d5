#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "maintenance_step.h"

namespace tributary::maintenance {

/// What retention makes of one partition of the log (tributary.partition_retention()).
struct PartitionRetention {
    std::string name;
    std::string from_tx;
    std::string to_tx;
    /// open, kept, waiting, held, archive or due (sql/internal/82_retention.sql).
    std::string state;
    std::optional<std::int64_t> bytes;
    std::vector<std::string> held_by;
    bool drop_unconsumed = false;
    bool archive = false;
    int archive_failures = 0;
};

/// A partition that left: what the log says of it.
struct DroppedPartition {
    std::int64_t events = 0;
    std::int64_t keys = 0;
    std::optional<std::int64_t> bytes;
    std::string from_tx;
    std::string to_tx;
    double lock_wait_ms = 0;
    double lock_held_ms = 0;
    /// Groups that still needed events in it (drop_unconsumed) and how many.
    std::map<std::string, std::int64_t> unconsumed;
};

/// The outcome of one try to drop.
enum class DropOutcome { dropped, not_due, lock_busy };

struct DropResult {
    DropOutcome outcome = DropOutcome::not_due;
    DroppedPartition partition;
};

/// Retention's port to the log. Every change names the lease (fenced); a
/// lost lease is thrown as LeaseLost.
class RetentionCatalog {
public:
    virtual ~RetentionCatalog() = default;
    virtual std::vector<PartitionRetention> partitions() = 0;
    /// Writes the partition's rows, in the order consumers read them, in
    /// `format` (csv or text) to `sink`, chunk by chunk; `sink` returns false
    /// to stop (the reader went away).
    virtual void stream_partition(const std::string& name, const std::string& format,
                                  const std::function<bool(const char*, std::size_t)>& sink) = 0;
    virtual void record_archived(const MaintainerLease& lease, const std::string& name) = 0;
    /// Returns how many times its archive has failed now.
    virtual int record_archive_failed(const MaintainerLease& lease, const std::string& name,
                                      const std::string& error) = 0;
    virtual DropResult drop(const MaintainerLease& lease, const std::string& name) = 0;
};

}  // namespace tributary::maintenance
