#pragma once

#include <string>

namespace tributary::metrics {

/// What /healthz answers: healthy, or the one-line reason it is not.
struct Health {
    bool healthy = true;
    std::string reason;  ///< e.g. "database unreachable: ..."; empty when healthy
};

}  // namespace tributary::metrics
