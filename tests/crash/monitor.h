#pragma once

// The figure that shows a hostile source harms only itself: once a second,
// how fast the healthy sources load and how far each lags behind its
// production, split by whether some hostile source was failing at the time.
// Sampled from the end of the initial backlog until production ends.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tributary::crash {

class Cluster;
class HostileEpisodes;
class Sources;

class Monitor {
public:
    Monitor(const Sources& sources, const Cluster& cluster, const HostileEpisodes& hostile);
    ~Monitor();
    Monitor(const Monitor&) = delete;
    Monitor& operator=(const Monitor&) = delete;

    void stop();
    /// Two lines: with and without a hostile source failing.
    std::vector<std::string> figures() const;

private:
    struct Sample {
        double t = 0;
        long stored = 0;       ///< sum of the healthy sources' cursors
        long produced = 0;     ///< sum of what they produced
        long max_lag = 0;      ///< the largest per-source lag, in events
        double mean_lag = 0;   ///< the mean per-source lag, in events
        bool hostile = false;  ///< some hostile source was failing
    };

    void run();
    bool take(Sample& sample) const;

    const Sources& sources_;
    const Cluster& cluster_;
    const HostileEpisodes& hostile_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::vector<Sample> samples_;
    std::thread thread_;
};

}  // namespace tributary::crash
