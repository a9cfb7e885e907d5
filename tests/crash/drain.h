#pragma once

// After the faults: wait until production has ended and every source's
// cursor has reached the end of its ground truth. A drain that does not end
// in time is an anomaly (a source stuck, a loader that stopped loading).

#include <chrono>
#include <functional>
#include <string>

namespace tributary::crash {

class Cluster;
class Sources;
class Tally;

/// What is left to drain: done, or a line saying what is left.
struct DrainLeft {
    bool done = false;
    std::string left;
};

/// Asks `left` every 500 ms until it says done, saying what is left every
/// 10 s. At `timeout` the anomaly drain_timeout, with `timeout_evidence` of
/// the last answer; an interrupt abandons. `what` names it in the log lines
/// ("drain", "the live group's drain"). Returns the seconds it took.
double wait_drained(const std::string& what, Tally& tally, std::chrono::seconds timeout,
                    const std::function<DrainLeft()>& left,
                    const std::function<std::string(const std::string&)>& timeout_evidence);

/// Returns the seconds the drain took.
double drain(const Sources& sources, const Cluster& cluster, Tally& tally, std::chrono::seconds timeout,
             const std::string& tributary_bin);

}  // namespace tributary::crash
