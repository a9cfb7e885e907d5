#pragma once

// Watches one elected role's lease (tributary.maintainer_lease or
// tributary.herald_lease, one row each) all run long, ten times a second:
// its token must only grow, and a new holder must come with a new token
// (every action of the role names the token, so two holders under one token
// could both act). Also measures how long the role went without an
// unexpired holder: for the maintainer, the partitions created ahead must
// outlast the longest such gap; for the herald, consumers wait on their
// fallback timers meanwhile.

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
    /// `role`: "maintainer" or "herald"; its anomaly class is ROLE_lease.
    LeaseWatch(const Cluster& cluster, Tally& tally, std::string role);
    ~LeaseWatch();
    LeaseWatch(const LeaseWatch&) = delete;
    LeaseWatch& operator=(const LeaseWatch&) = delete;

    void stop();
    /// After every loader (and receiver) stopped: nobody may hold the lease, or renew it
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
    const std::string role_;
    const std::string anomaly_;  ///< ROLE_lease
    const std::string read_lease_;
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
