#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "pushed_source_catalog.h"

namespace tributary::webhook {

/// The pushed sources as last read from the catalogue, read again every
/// `refresh_every`, and sooner (at most every 100 ms) when a request names a
/// source not in it, so that a source just added is found at once without a
/// flood of unknown names costing a read each. A read that fails keeps the
/// last good sources: a database outage does not turn every source into a
/// 404. Thread-safe; one thread reads the catalogue while the others go on
/// with what was read last.
class PushedSourceCache {
public:
    using Clock = std::chrono::steady_clock;
    static constexpr std::chrono::milliseconds kUnknownNameRefresh{100};

    PushedSourceCache(PushedSourceCatalog& catalog, std::chrono::milliseconds refresh_every)
        : catalog_(catalog), refresh_every_(refresh_every) {}

    struct Lookup {
        enum class Kind {
            found,
            unknown,      ///< no pushed source of that name
            unavailable,  ///< the catalogue was never read: nothing can be said
        };
        Kind kind = Kind::unknown;
        std::optional<PushedSource> source;  ///< found
    };
    Lookup find(const std::string& name, Clock::time_point now);

    /// The largest max_body_bytes of any pushed source (kDefaultMaxBodyBytes
    /// when there is none, or the catalogue cannot be read).
    std::size_t largest_body_bytes(Clock::time_point now);

    /// Reads the catalogue again at the next lookup (a store said a source
    /// stopped taking pushes).
    void mark_stale();

private:
    using Sources = std::map<std::string, PushedSource>;

    std::shared_ptr<const Sources> current(const std::string* wanted, Clock::time_point now);
    void refresh(Clock::time_point now);

    PushedSourceCatalog& catalog_;
    const std::chrono::milliseconds refresh_every_;
    std::mutex mutex_;
    std::condition_variable read_done_;       ///< a read ended
    std::shared_ptr<const Sources> sources_;  ///< null until a read succeeds
    std::optional<Clock::time_point> last_read_;
    bool stale_ = false;
    bool reading_ = false;
    bool unreachable_ = false;  ///< said once per outage
};

}  // namespace tributary::webhook
