#include "schema_wait.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "core/errors.h"
#include "postgres/login_privileges.h"

namespace tributary::cli {

bool wait_for_schema(const std::string& db, postgres::Migrator::Needs needs, const OwnSessions& sessions,
                     const std::string& group_role, const StopSignal& stop, std::chrono::milliseconds max_runtime,
                     bool herald) {
    const auto deadline = std::chrono::steady_clock::now() + max_runtime;
    std::chrono::milliseconds pause{500};
    for (bool said = false;; said = true) {
        try {
            require_own_sessions(db, sessions);  // first: the schema check's session sets timeouts
            // The role next: a role without it cannot even read which migrations are applied.
            postgres::require_privileges_of(db, group_role);
            postgres::Migrator(db).require_current(needs);
            if (herald) postgres::Migrator(db).require_herald_functions();
            if (said) spdlog::info("database reachable again; starting");
            return true;
        } catch (const DatabaseUnavailable& e) {
            if (max_runtime.count() && std::chrono::steady_clock::now() + pause >= deadline) {
                spdlog::error(
                    "database still unavailable, and the next try would pass the max runtime of {} ms: "
                    "giving up",
                    max_runtime.count());
                throw;
            }
            if (!said) spdlog::error("database unavailable at start, retrying with backoff: {}", e.what());
        }
        if (stop.wait_for(pause)) return false;
        pause = std::min(pause * 2, std::chrono::milliseconds(10000));
    }
}

}  // namespace tributary::cli
