#pragma once

// Watches the maintainer's lease (tributary.maintainer_lease, one row) all
// run long, ten times a second: its token must only grow, and a new holder
// must come with a new token (the fence every maintainer action passes
// names the token, so two holders under one token could both act). Also
// measures how long the log went without an unexpired holder: the
// partitions created ahead must outlast the longest such gap.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace tributary::crash {

class Cluster;
class Tally;

class LeaseWatch {
public:
    LeaseWatch(const Cluster& cluster, Tally& tally);
    ~LeaseWatch();
    LeaseWatch(const LeaseWatch&) = delete;
    LeaseWatch& operator=(const LeaseWatch&) = delete;

    void stop();
    /// After every loader stopped: nobody may hold the lease, or renew it
    /// (a holder that could not release it: until it runs out).
    void check_released(std::chrono::milliseconds lease);
    std::vector<std::string> figures() const;

private:
    struct Reading {
        std::string holder;
        long long token = 0;
        bool live = false;  ///< unexpired
    };

    void run();
    void observe(const Reading& r, double t);

    const Cluster& cluster_;
    Tally& tally_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    bool have_last_ = false;
    bool ever_live_ = false;
    Reading last_;
    long long first_token_ = -1;
    long handovers_ = 0;
    std::set<std::string> holders_;
    double vacant_since_ = -1, longest_vacancy_ = 0, vacant_total_ = 0;
    std::string end_state_ = "not checked at the end";
    std::thread thread_;
};

}  // namespace tributary::crash
