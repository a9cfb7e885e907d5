#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/stop_signal.h"
#include "lease_store.h"
#include "maintenance_step.h"

namespace tributary::maintenance {

struct ElectionTimings {
    /// How long a lease lasts unrenewed: how long the role may go unfilled after its holder
    /// vanished without releasing.
    std::chrono::milliseconds lease{30000};
    /// How often a pass runs while this candidate holds the lease.
    std::chrono::milliseconds interval{60000};
};

/// One candidate for a role that one process at a time fills: the maintainer (its steps keep the
/// log) or the herald (its one step announces the log's head). It competes for the lease every
/// lease/3 and, while it holds it, renews it as often; it runs its steps in order every interval,
/// renewing the lease between steps, and stops acting at once when a step says the lease is gone
/// (LeaseLost). A pass more frequent than the renewal costs no write of the lease. Logs each
/// change of state (took, lost, released the lease; a step's outcome changed), not each pass,
/// as `ROLE=HOLDER`. Not thread-safe: one thread drives it.
class ElectedRole {
public:
    /// `role`: "maintainer" or "herald", for the log lines.
    ElectedRole(std::string role, LeaseStore& store, std::vector<MaintenanceStep*> steps, std::string holder,
                ElectionTimings timings);

    /// Takes or renews the lease; true while this candidate holds it. A database out of reach
    /// counts as not holding it (the lease lapses on its own). Throws MaintainerForbidden.
    bool hold();
    /// One pass over the steps (the lease must be held). False when the lease was lost on the way.
    bool pass();
    /// Gives the lease up if held (a stopping maintainer: the next may take over at once).
    void release();
    /// Competes and acts until `stop`, then releases. Throws MaintainerForbidden.
    void run(const StopSignal& stop);

    const std::string& holder() const { return holder_; }
    /// The lease held now, if any.
    std::optional<MaintainerLease> lease() const;

private:
    void lost(const std::string& why);
    void run_step(MaintenanceStep& step);
    void note_outcome(const MaintenanceStep& step, const std::string& outcome);

    LeaseStore& store_;
    std::vector<MaintenanceStep*> steps_;
    const std::string role_;
    const std::string holder_;
    const ElectionTimings timings_;
    std::optional<std::int64_t> token_;
    bool unreachable_ = false;                     ///< the last acquire could not reach the database
    bool seen_other_holder_ = false;               ///< logged "another maintainer holds the lease" already
    std::map<std::string, std::string> outcomes_;  ///< each step's last outcome, logged on change
};

}  // namespace tributary::maintenance
