#pragma once

// The webhook receivers of a run (`tributary receive --listen 127.0.0.1:PORT`),
// supervised like the loaders: receiver 0 connects to the cluster directly,
// receiver 1 (and every other odd one) through the fault proxy when there is
// one, so that proxy faults cut a receiver's commits too.

#include <string>
#include <vector>

#include "supervisor.h"

namespace tributary::crash {

class Cluster;
class Proxy;

/// A TCP port on 127.0.0.1 that was free a moment ago, below the ephemeral range.
int free_port();

/// `count` receivers on free ports, named crash-receiver-N (their application_name).
std::vector<ProcessSpec> receiver_specs(int count, const Cluster& cluster, const Proxy* proxy);

/// The ports they listen on, in the same order.
std::vector<int> receiver_ports(const std::vector<ProcessSpec>& receivers);

/// Whether `tributary receive` exists in this build (`receive --help` shows --listen).
bool receive_command_exists(const std::string& tributary_bin);

}  // namespace tributary::crash
