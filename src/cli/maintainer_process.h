#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/stop_signal.h"
#include "maintenance/archive_command.h"
#include "maintenance/elected_role.h"
#include "postgres/maintainer_fence.h"
#include "postgres/postgres_activity.h"
#include "postgres/postgres_lease_store.h"
#include "postgres/postgres_retention.h"
#include "postgres/postgres_session.h"

namespace tributary::cli {

/// The maintainer's flags, as `maintain` and `run` (--maintainer-*) take them.
struct MaintainerFlags {
    std::string lease = "30s";
    std::string interval = "60s";
    /// --archive-command, --archive-format (no prefix in `run` either).
    std::string archive_command;
    std::string archive_format = "csv";
    /// How the flags are spelt in this command ("" in `maintain`, "maintainer-" in `run`), for messages.
    std::string prefix;

    /// Parsed; throws UsageError (an interval or lease that is not a duration, a lease under 1 s).
    maintenance::ElectionTimings timings() const;
    maintenance::ArchiveSettings archive() const { return {archive_command, archive_format}; }
};

/// Adds --PREFIXlease and --PREFIXinterval, and retention's --archive-command and
/// --archive-format (unprefixed), to `cmd`.
void add_maintainer_flags(CLI::App& cmd, MaintainerFlags& flags, const std::string& prefix);

/// A maintainer wired to PostgreSQL: its own session (autocommit for the lease, fenced
/// transactions for the steps), the pass's steps in order: observe, partitions ahead,
/// retention's, then the console's activity fold.
class MaintainerProcess {
public:
    /// `holder`: its name in the election (maintenance::unique_holder_name()).
    MaintainerProcess(const std::string& db, const MaintainerFlags& flags, std::string holder);

    maintenance::ElectedRole& maintainer() { return *maintainer_; }

private:
    maintenance::ElectionTimings timings_;
    postgres::PostgresSession session_;
    postgres::PostgresLeaseStore store_;
    postgres::MaintainerFence fence_;
    postgres::PostgresRetention retention_;
    postgres::PostgresActivity activity_;
    std::vector<std::unique_ptr<maintenance::MaintenanceStep>> steps_;
    std::unique_ptr<maintenance::ElectedRole> maintainer_;
};

}  // namespace tributary::cli
