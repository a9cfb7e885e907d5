#pragma once

// The webhook sender of the crash suite (issue 15): lanes (threads) that POST
// events with unique keys to the pushed sources, alternating between the
// receivers, and retry every request that did not get a 2xx answer (any
// other status, a cut connection, a timeout) until it does, as a webhook
// provider would. It records every key it ever sent with its payload, which
// of them were acknowledged, and each lane's keys in the order sent: what
// the push checker compares the database with.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pushed_sources.h"

namespace tributary::crash {

class Tally;

struct SenderConfig {
    std::vector<PushedSourceSpec> sources;
    std::vector<int> receiver_ports;
    int lanes = 4;      ///< lane i sends to source i % sources, one request at a time
    double rate = 100;  ///< new requests per second, all lanes together
    unsigned long long seed = 0;
    /// A request not answered within this is abandoned and sent again (to the other receiver).
    std::chrono::milliseconds request_timeout{5000};
};

/// What one pushed source was sent.
struct SentEvents {
    std::unordered_map<std::string, std::string> payloads;  ///< every key ever sent: its event's JSON text
    std::unordered_set<std::string> acknowledged;           ///< keys of requests answered 2xx
    std::vector<std::vector<std::string>> lanes;            ///< each lane's keys in the order sent
};

class Sender {
public:
    Sender(SenderConfig config, Tally& tally);
    /// Gives up on whatever is still unacknowledged and joins the lanes.
    ~Sender();
    Sender(const Sender&) = delete;
    Sender& operator=(const Sender&) = delete;

    /// No new requests; the ones in flight are retried until acknowledged.
    void stop_sending();
    /// Waits until every lane's last request is acknowledged (the lanes then
    /// end); on timeout gives up on them and returns false.
    bool drain(std::chrono::seconds timeout);

    /// By source name; complete once drain() returned.
    std::map<std::string, SentEvents> sent() const;
    /// Requests, attempts, answers by status, errors, the most attempts one request took.
    std::vector<std::string> figures() const;

private:
    struct Lane;
    struct Request;
    void run_lane(Lane& lane);
    Request next_request(Lane& lane);
    void deliver(Lane& lane, const Request& request);
    bool answered(Lane& lane, const Request& request, int port, int status, const std::string& body);

    SenderConfig config_;
    Tally& tally_;
    std::atomic<bool> sending_{true}, give_up_{false};
    std::vector<std::unique_ptr<Lane>> lanes_;
    mutable std::mutex mutex_;
    std::condition_variable lane_ended_;
    int lanes_running_ = 0;
    std::vector<std::thread> threads_;
};

}  // namespace tributary::crash
