#pragma once

#include <chrono>
#include <map>
#include <string>

#include "archive_command.h"
#include "lease_renewal.h"
#include "maintenance_step.h"
#include "retention_catalog.h"

namespace tributary::maintenance {

/// The maintainer's retention step: each pass, every partition retention
/// says is due leaves, oldest first; one whose policy asks for the archive
/// first goes to the archive command (and stays until it exits 0); one a
/// group holds back is logged with the groups, once per change.
class RetentionStep : public MaintenanceStep {
public:
    RetentionStep(RetentionCatalog& catalog, ArchiveSettings archive, LeaseRenewal renewal)
        : catalog_(catalog), archive_(std::move(archive)), renewal_(std::move(renewal)) {}
    const char* name() const override { return "retention"; }
    void run(const MaintainerLease& lease) override;

private:
    void archive_then_drop(const MaintainerLease& lease, const PartitionRetention& partition);
    bool archive(const MaintainerLease& lease, const PartitionRetention& partition);
    void drop(const MaintainerLease& lease, const PartitionRetention& partition);
    void report_held(const PartitionRetention& partition);
    /// The partition's rows into `sink`, renewing the lease on the way.
    void stream(const MaintainerLease& lease, const PartitionRetention& partition,
                const std::function<bool(const char*, std::size_t)>& sink);

    RetentionCatalog& catalog_;
    ArchiveSettings archive_;
    LeaseRenewal renewal_;
    /// What was last logged per partition ("held by a,b", "no archive
    /// command"): a state is logged when it changes, not every pass.
    std::map<std::string, std::string> reported_;
};

}  // namespace tributary::maintenance
