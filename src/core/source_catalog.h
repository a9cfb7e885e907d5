#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "source.h"

namespace tributary {

/// Which part of the due sources a worker asks for: a process's workers
/// split them by `id % count == index`, so that they rarely race for one
/// source; a worker also gets another's source once it has been due for
/// `take_over_after` (its owner is busy or gone) and the worker has none of its own due.
struct ScheduleShare {
    int index = 0;
    int count = 1;
    std::chrono::milliseconds take_over_after{250};

    bool owns(int source_id) const { return count <= 1 || source_id % count == index; }
};

/// What the loader should do now, read from the shared gates in one go.
struct SourceSchedule {
    /// Enabled sources of the share whose gate lets a request through now,
    /// earliest due first (the gate still decides, atomically, when a worker
    /// gets there).
    std::vector<Source> due;
    /// How long until the next source becomes due for this share; empty when
    /// there is none.
    std::optional<std::chrono::milliseconds> next_due_in;
    /// Enabled sources not in `due` whose last answer was a batch (they are
    /// likely to have more) and that nobody is asking right now (a request
    /// in flight is its holder's to see through): while any exist, the
    /// loader is not idle.
    std::size_t pending = 0;
};

/// The registered sources the loader should work on.
class SourceCatalog {
public:
    virtual ~SourceCatalog() = default;
    /// The enabled sources and their timing, as of now, for one share.
    virtual SourceSchedule schedule(const ScheduleShare& share) = 0;
};

}  // namespace tributary
