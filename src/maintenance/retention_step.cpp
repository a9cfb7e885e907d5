#include "retention_step.h"

#include <spdlog/spdlog.h>

namespace tributary::maintenance {

namespace {

std::string joined(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
}

std::string bytes_text(const std::optional<std::int64_t>& bytes) {
    return bytes ? std::to_string(*bytes) + " bytes" : "size unknown";
}

}  // namespace

void RetentionStep::run(const MaintainerLease& lease) {
    for (const auto& partition : catalog_.partitions()) {
        if (partition.state == "held") report_held(partition);
        else if (partition.state == "archive" || partition.state == "due") archive_then_drop(lease, partition);
        else reported_.erase(partition.name);
    }
}

void RetentionStep::report_held(const PartitionRetention& partition) {
    const std::string said = "held by " + joined(partition.held_by);
    if (reported_[partition.name] == said) return;
    reported_[partition.name] = said;
    spdlog::warn(
        "retention held back by group {}: partition {} [{}, {}) is past its policy but kept: the group(s) have "
        "not consumed all of it (their events stay until they do; a policy with --drop-unconsumed drops anyway)",
        joined(partition.held_by), partition.name, partition.from_tx, partition.to_tx);
}

void RetentionStep::archive_then_drop(const MaintainerLease& lease, const PartitionRetention& partition) {
    if (partition.state == "archive" && !archive(lease, partition)) return;
    drop(lease, partition);
}

bool RetentionStep::archive(const MaintainerLease& lease, const PartitionRetention& partition) {
    if (archive_.command.empty()) {
        const std::string said = "no archive command";
        if (reported_[partition.name] != said)
            spdlog::warn(
                "retention: partition {} [{}, {}) is due but its policy says --archive and this maintainer "
                "has no --archive-command: it stays until a maintainer with one runs",
                partition.name, partition.from_tx, partition.to_tx);
        reported_[partition.name] = said;
        return false;
    }
    spdlog::info("retention: archiving partition {} [{}, {}) ({}) as {}", partition.name, partition.from_tx,
                 partition.to_tx, bytes_text(partition.bytes), archive_.format);
    const auto failure = run_archive_command(
        archive_, {partition.name, partition.from_tx, partition.to_tx},
        [&](const std::function<bool(const char*, std::size_t)>& sink) { stream(lease, partition, sink); });
    if (failure) {
        const int failures = catalog_.record_archive_failed(lease, partition.name, *failure);
        spdlog::error(
            "retention: archiving partition {} failed ({} time(s) so far): {}; it stays and is tried again "
            "on a later pass",
            partition.name, failures, *failure);
        return false;
    }
    catalog_.record_archived(lease, partition.name);
    spdlog::info("retention: archived partition {}", partition.name);
    return true;
}

void RetentionStep::stream(const MaintainerLease& lease, const PartitionRetention& partition,
                           const std::function<bool(const char*, std::size_t)>& sink) {
    using Clock = std::chrono::steady_clock;
    auto renewed = Clock::now();
    catalog_.stream_partition(partition.name, archive_.format, [&](const char* data, std::size_t size) {
        if (renewal_.renew && Clock::now() - renewed >= renewal_.every) {
            renewal_.renew(lease);  // throws LeaseLost: the archive stops here, unrecorded
            renewed = Clock::now();
        }
        return sink(data, size);
    });
}

void RetentionStep::drop(const MaintainerLease& lease, const PartitionRetention& partition) {
    const auto result = catalog_.drop(lease, partition.name);
    if (result.outcome == DropOutcome::lock_busy) {
        spdlog::info(
            "retention: partition {} not dropped: the log was busy for the 3 s the drop may wait for its "
            "lock; tried again on a later pass",
            partition.name);
        return;
    }
    if (result.outcome == DropOutcome::not_due) return;
    reported_.erase(partition.name);
    const auto& dropped = result.partition;
    for (const auto& [group, events] : dropped.unconsumed)
        spdlog::warn(
            "retention: partition {} dropped with {} event(s) consumer group {} had not consumed "
            "(--drop-unconsumed)",
            partition.name, events, group);
    spdlog::info(
        "retention: dropped partition {} [{}, {}): {} events, {} keys, {}; waited {:.1f} ms for the lock, "
        "held it {:.1f} ms",
        partition.name, dropped.from_tx, dropped.to_tx, dropped.events, dropped.keys, bytes_text(dropped.bytes),
        dropped.lock_wait_ms, dropped.lock_held_ms);
}

}  // namespace tributary::maintenance
