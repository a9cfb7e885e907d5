#pragma once

#include <vector>

#include "source.h"

namespace tributary {

/// The registered sources the loader should work on.
class SourceCatalog {
public:
    virtual ~SourceCatalog() = default;
    /// Every enabled source, in a stable order (by id).
    virtual std::vector<Source> enabled_sources() = 0;
};

}  // namespace tributary
