#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "lock_holder.h"
#include "source.h"
#include "source_outcome.h"

namespace tributary {

struct PassSummary;

/// Why a source's turn failed, as operators count it.
enum class FailureClass { none, network, http_status, invalid_batch, store };

const char* to_string(FailureClass c);

/// Why a batch was not stored although the source was this worker's: in a
/// healthy cluster neither happens (the lock and the lease keep writers
/// apart), so each says something is wrong (a loader behind a transaction
/// pooler, whose lock is not its session's; a source that rewrites history).
enum class StoreConflict {
    none,
    cursor_moved,  ///< the cursor's compare-and-set found another writer's cursor
    duplicate_ids  ///< a unique key refused ids another writer stored behind the cursor
};

const char* to_string(StoreConflict c);

/// One source's turn as the loader saw it.
struct TurnReport {
    SourceOutcome outcome = SourceOutcome::failed;
    std::size_t events = 0;
    FailureClass failure = FailureClass::none;
    std::optional<std::chrono::duration<double>> fetch_time = {};   ///< when a request was made
    std::optional<std::chrono::duration<double>> append_time = {};  ///< when a batch was stored
    std::optional<std::int64_t> cursor = {};                        ///< after the turn, when known
    std::optional<std::int64_t> backlog = {};                       ///< as the source reported it
    StoreConflict store_conflict = StoreConflict::none;             ///< with outcome conflict, at store time
};

/// What a loader tells the outside world (metrics, health, process-wide
/// logs) besides its own log lines. Called from each worker's thread, so
/// implementations shared by workers must be thread-safe. Every method has
/// an empty default: observe only what you need.
class LoaderObserver {
public:
    virtual ~LoaderObserver() = default;
    virtual void turn_done(const Source&, const TurnReport&) {}
    virtual void pass_done(const PassSummary&) {}
    virtual void idle_sleep(std::chrono::milliseconds) {}
    /// A source's lock is held by a stranger (a session that is not a loader
    /// in a turn), or no longer is (empty).
    virtual void lock_stranger(const Source&, const std::optional<LockHolder>& /*holder*/) {}
    /// The database went away (with why) or came back (reachable, empty why).
    virtual void database_changed(bool /*reachable*/, const std::string& /*why*/) {}
};

/// Observes nothing.
inline LoaderObserver& no_observer() {
    static LoaderObserver none;
    return none;
}

}  // namespace tributary
