#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/lock_holder.h"
#include "core/source.h"
#include "webhook/pushed_source.h"

namespace tributary::postgres {

/// The kinds of source (migration 0012): asked by a loader, pushed to
/// `tributary receive`, published from SQL. As `tributary.sources.kind` names them.
enum class SourceKind { pulled, pushed, published };
const char* kind_name(SourceKind kind);  ///< "http", "push", "published"

/// A source as `source add` registers it.
struct SourceSpec {
    SourceKind kind = SourceKind::pulled;
    std::string name;
    std::string url;
    std::vector<std::string> headers;
    int interval_ms = 200;
    int batch_size = 1000;
    int timeout_ms = 10000;
    std::int64_t after_id = 0;  ///< initial cursor: events up to here are skipped
    RecordLayout layout;
    Paging paging;
    EnvAuth auth;
    /// Keyed by text: the initial position ("" = the start).
    std::string start;
    /// Pushed: how requests are authenticated and keyed (name and id unused).
    webhook::PushedSource push;
    /// Published: the roles whose members may publish to it.
    std::vector<std::string> publishers;
};

/// A registered source with its switch. `source` holds a pulled source's
/// reading, `push` a pushed one's receiving.
struct SourceRecord {
    SourceKind kind = SourceKind::pulled;
    Source source;
    bool enabled = true;
    webhook::PushedSource push;
    std::vector<std::string> publishers;
};

/// One row of `status`. A pushed or published source has a name, a kind
/// and its switch only: nobody asks it, so it has no gate or cursor.
struct SourceStatus {
    SourceKind kind = SourceKind::pulled;
    std::string name;
    bool enabled = true;
    std::string state;  ///< ok | transient | throttled | failing
    std::int64_t cursor = 0;
    /// Keyed by text: the cursor's position and the records taken there.
    std::optional<std::string> position;
    std::int64_t taken = 0;
    std::string paging;  ///< the style, e.g. "after-id"
    /// The last `source rewind`: who, when (ISO 8601 UTC), from, to.
    struct Rewind {
        std::string by, at, from, to;
    };
    std::optional<Rewind> last_rewind;
    std::int64_t events_stored = 0;
    int failures = 0;
    std::optional<double> seconds_since_request;
    std::optional<double> seconds_since_success;
    double seconds_until_allowed = 0;  ///< 0 when due now
    std::optional<std::string> last_error;
    std::optional<double> seconds_since_error;
    std::optional<std::int64_t> backlog;  ///< as the source last reported it
    std::optional<LockHolder> locked_by;  ///< a stranger holding its lock (tributary.foreign_locks)
};

}  // namespace tributary::postgres
