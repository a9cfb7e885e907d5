#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <vector>

#include "source.h"

namespace tributary {

/// What the loader should do now, read from the shared gates in one go.
struct SourceSchedule {
    /// Enabled sources whose gate lets a request through now, earliest due
    /// first (the gate still decides, atomically, when a worker gets there).
    std::vector<Source> due;
    /// For each of `due`: how long it has been due.
    std::vector<std::chrono::milliseconds> overdue;
    /// How long until the next enabled source that is not due now becomes
    /// due; empty when there is none.
    std::optional<std::chrono::milliseconds> next_due_in;
    /// Enabled sources that are not due now and whose last answer was a
    /// batch (they are likely to have more): while any exist, the loader is
    /// not idle.
    std::size_t pending = 0;
};

/// The registered sources the loader should work on.
class SourceCatalog {
public:
    virtual ~SourceCatalog() = default;
    /// The enabled sources and their timing, as of now.
    virtual SourceSchedule schedule() = 0;
};

}  // namespace tributary
