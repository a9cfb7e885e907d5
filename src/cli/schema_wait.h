#pragma once

#include <chrono>
#include <string>

#include "core/stop_signal.h"
#include "postgres/migrator.h"
#include "session_pooling.h"

namespace tributary::cli {

/// Checks that the command gets sessions of its own (require_own_sessions:
/// SharedSessionsRefused behind a pooler in transaction mode, before it took
/// anything), then the schema, before a long-running command starts (`run`,
/// `receive`); while the database cannot be reached (a supervisor started us
/// before PostgreSQL), waits and retries with backoff rather than exiting. A
/// schema that is not what the command `needs` is an error, and so is a
/// database still away when `max_runtime` (if not zero) is over: cron must
/// not pile up waiting processes. False when stopped while waiting.
///
/// Before anything else, that `sessions` are the database's own and not a
/// pooler's shared ones (SharedSessionsRefused); then, that the login role
/// holds every privilege of `group_role` (e.g. "tributary_loader"):
/// PermissionDenied if not, so that the command refuses once at start rather
/// than failing at every pass. With `herald` (a command that competes for the
/// herald's lease), also that the herald's functions are there.
bool wait_for_schema(const std::string& db, postgres::Migrator::Needs needs, const OwnSessions& sessions,
                     const std::string& group_role, const StopSignal& stop,
                     std::chrono::milliseconds max_runtime = std::chrono::milliseconds::zero(), bool herald = false);

}  // namespace tributary::cli
