#pragma once

// tributary-fault-proxy (tools/fault-proxy) in front of the cluster, for the
// loaders that connect through it: cuts, cuts right after a COMMIT went
// through (commit outcome unknown), delay, refusal.

#include <memory>
#include <string>

#include "processes.h"

namespace tributary::crash {

class Proxy {
public:
    Proxy(const std::string& binary, int target_port);

    int listen_port() const { return listen_port_; }
    /// POST to the control API, e.g. "/cut", "/delay?ms=200"; returns the answer.
    std::string control(const std::string& path) const;
    /// GET /stats.
    std::string stats() const;

private:
    std::unique_ptr<ChildProcess> process_;
    int listen_port_ = 0;
    std::string control_url_;
};

}  // namespace tributary::crash
