#pragma once

#include <string>
#include <vector>

namespace tributary::metrics {

/// What /healthz answers: healthy, or the one-line reason it is not.
struct Health {
    bool healthy = true;
    std::string reason;  ///< e.g. "database unreachable: ..."; empty when healthy
    /// Worth a look, though not a reason to restart the process (e.g. a
    /// source locked by a stranger): lines after "ok".
    std::vector<std::string> warnings;
};

}  // namespace tributary::metrics
