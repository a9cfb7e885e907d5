#pragma once

// After the faults: wait until production has ended and every source's
// cursor has reached the end of its ground truth. A drain that does not end
// in time is an anomaly (a source stuck, a loader that stopped loading).

#include <chrono>
#include <string>

namespace tributary::crash {

class Cluster;
class Sources;
class Tally;

/// Returns the seconds the drain took.
double drain(const Sources& sources, const Cluster& cluster, Tally& tally, std::chrono::seconds timeout,
             const std::string& tributary_bin);

}  // namespace tributary::crash
