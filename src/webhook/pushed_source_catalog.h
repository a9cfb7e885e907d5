#pragma once

#include <vector>

#include "pushed_source.h"

namespace tributary::webhook {

/// Port: the pushed sources as the catalogue has them now (enabled or not).
/// Adapter: postgres::PostgresPushedSources; fake: tests' FakePushedSources.
/// Throws StoreUnavailable (pushed_events.h) when the database cannot be reached.
class PushedSourceCatalog {
public:
    virtual ~PushedSourceCatalog() = default;
    virtual std::vector<PushedSource> pushed_sources() = 0;
};

}  // namespace tributary::webhook
