#include "sender.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "report.h"
#include "run_options.h"
#include "webhook_signing.h"

namespace tributary::crash {

namespace {

using Clock = std::chrono::steady_clock;

/// Between two attempts at one request: a provider's retry, shortened.
constexpr std::chrono::milliseconds kRetryPause{150};
/// A 4xx shown as evidence this many times per lane at most; all are counted.
constexpr int kRefusalsShown = 3;

std::string padded(long n, int width) {
    char text[32];
    std::snprintf(text, sizeof text, "%0*ld", width, n);
    return text;
}

/// A 2xx body is {"stored": n, "duplicates": m} with n + m the request's events.
bool counts_add_up(const std::string& body, std::size_t events) {
    const auto answer = nlohmann::json::parse(body, nullptr, false);
    if (!answer.is_object() || !answer.contains("stored") || !answer.contains("duplicates")) return false;
    const auto& stored = answer["stored"];
    const auto& duplicates = answer["duplicates"];
    if (!stored.is_number_unsigned() || !duplicates.is_number_unsigned()) return false;
    return stored.get<std::size_t>() + duplicates.get<std::size_t>() == events;
}

}  // namespace

/// One request: its body, headers and the keys its events will be stored under.
struct Sender::Request {
    const PushedSourceSpec* source = nullptr;
    long number = 0;
    std::string body;
    httplib::Headers headers;
    std::vector<std::string> keys;
};

struct Sender::Lane {
    int index = 0;
    const PushedSourceSpec* source = nullptr;
    std::mt19937_64 random;
    std::map<int, std::unique_ptr<httplib::Client>> clients;  ///< by receiver port, kept alive
    // Written by the lane's thread only; read once it has ended.
    SentEvents sent;  ///< this lane's share (lanes holds one list: its own)
    long requests = 0, acknowledged = 0, attempts = 0, most_attempts = 0, refused = 0;
    std::map<std::string, long> answers;  ///< "201", "503", "cut or timeout: ..."
};

Sender::Sender(SenderConfig config, Tally& tally) : config_(std::move(config)), tally_(tally) {
    if (config_.sources.empty() || config_.receiver_ports.empty() || config_.lanes < 1)
        throw std::runtime_error("the sender needs sources, receivers and lanes");
    for (int i = 0; i < config_.lanes; ++i) {
        auto lane = std::make_unique<Lane>();
        lane->index = i;
        lane->source = &config_.sources[static_cast<std::size_t>(i) % config_.sources.size()];
        lane->random.seed(config_.seed * 100 + static_cast<unsigned long long>(i));
        lane->sent.lanes.resize(1);
        lanes_.push_back(std::move(lane));
    }
    lanes_running_ = config_.lanes;
    for (auto& lane : lanes_) threads_.emplace_back([this, l = lane.get()] { run_lane(*l); });
    say("sender: " + std::to_string(config_.lanes) + " lanes, " + std::to_string(std::lround(config_.rate)) +
        " requests/s in all, to " + std::to_string(config_.receiver_ports.size()) + " receivers");
}

Sender::~Sender() {
    sending_ = false;
    give_up_ = true;
    for (auto& t : threads_) t.join();
}

void Sender::stop_sending() {
    sending_ = false;
    say("sender: no new requests; retrying the ones in flight until acknowledged");
}

bool Sender::drain(std::chrono::seconds timeout) {
    const auto deadline = Clock::now() + timeout;
    std::unique_lock<std::mutex> lock(mutex_);
    // In slices, so that an interrupted run does not wait the whole timeout.
    bool done = false;
    while (!done && Clock::now() < deadline && !interrupted())
        done = lane_ended_.wait_for(lock, std::chrono::seconds(1), [this] { return lanes_running_ == 0; });
    lock.unlock();
    if (!done) give_up_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
    for (const auto& lane : lanes_)
        if (lane->refused > kRefusalsShown)
            tally_.anomaly("push_refused",
                           std::to_string(lane->refused - kRefusalsShown) + " more in lane " +
                               std::to_string(lane->index) + " (not shown)",
                           lane->refused - kRefusalsShown);
    return done;
}

void Sender::run_lane(Lane& lane) {
    const auto interval = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(config_.lanes / std::max(config_.rate, 0.1)));
    auto next = Clock::now();
    while (sending_ && !give_up_) {
        deliver(lane, next_request(lane));
        // Paced, without a burst to catch up after a long retry.
        next = std::max(next + interval, Clock::now());
        while (sending_ && !give_up_ && Clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::lock_guard<std::mutex> guard(mutex_);
    --lanes_running_;
    lane_ended_.notify_all();
}

Sender::Request Sender::next_request(Lane& lane) {
    Request r;
    r.source = lane.source;
    r.number = ++lane.requests;
    // Half are single events, the others arrays of 2-4.
    const int events =
        std::bernoulli_distribution(0.5)(lane.random) ? 1 : std::uniform_int_distribution<int>(2, 4)(lane.random);
    // Most carry the source's key header (a delivery id), the others are
    // keyed by each event's /id.
    const bool by_header = std::bernoulli_distribution(0.6)(lane.random);
    const std::string request_id = "L" + std::to_string(lane.index) + "-" + padded(r.number, 7);
    const std::string delivery = "dlv-" + request_id;
    std::vector<std::string> payloads;
    for (int i = 0; i < events; ++i) {
        nlohmann::json event{
            {"id", "evt-" + request_id + "-" + std::to_string(i)},
            {"lane", lane.index},
            {"request", r.number},
            {"index", i},
            // Escapes and a multi-byte letter: stored jsonb must equal what was sent.
            {"note", "caf\u00e9 \"quoted\" " + std::string(std::uniform_int_distribution<int>(10, 200)(lane.random),
                                                           static_cast<char>('a' + lane.index % 26))}};
        payloads.push_back(event.dump());
        r.keys.push_back(!by_header    ? event["id"].get<std::string>()
                         : events == 1 ? delivery
                                       : delivery + "#" + std::to_string(i));
    }
    if (events == 1) {
        r.body = payloads[0];
    } else {
        r.body = "[";
        for (std::size_t i = 0; i < payloads.size(); ++i) r.body += (i ? "," : "") + payloads[i];
        r.body += "]";
    }
    if (by_header) r.headers.emplace(r.source->key_header, delivery);
    if (r.source->auth == "github") {
        r.headers.emplace("X-Hub-Signature-256", github_signature(r.source->secret, r.body));
        r.headers.emplace("X-GitHub-Event", "push");
    } else {
        r.headers.emplace("Authorization", "Bearer " + r.source->secret);
    }
    // Recorded before the first attempt: anything stored from now on was sent.
    for (std::size_t i = 0; i < r.keys.size(); ++i) {
        lane.sent.payloads.emplace(r.keys[i], payloads[i]);
        lane.sent.lanes[0].push_back(r.keys[i]);
    }
    return r;
}

void Sender::deliver(Lane& lane, const Request& request) {
    const std::string path = "/sources/" + request.source->name + "/events";
    const auto& ports = config_.receiver_ports;
    long attempts = 0;
    while (!give_up_) {
        // Alternating between the receivers, from one request and one attempt to the next.
        const int port = ports[static_cast<std::size_t>(request.number + attempts + lane.index) % ports.size()];
        ++attempts;
        ++lane.attempts;
        auto& client = lane.clients[port];
        if (!client) {
            client = std::make_unique<httplib::Client>("127.0.0.1", port);
            client->set_keep_alive(true);
            client->set_connection_timeout(std::chrono::seconds(1));
            client->set_read_timeout(config_.request_timeout);
            client->set_write_timeout(config_.request_timeout);
        }
        const auto result = client->Post(path, request.headers, request.body, "application/json");
        if (result) {
            if (answered(lane, request, port, result->status, result->body)) break;
        } else {
            ++lane.answers["no answer: " + httplib::to_string(result.error())];
            // A broken keep-alive connection is not reused.
            client.reset();
        }
        std::this_thread::sleep_for(kRetryPause);
    }
    lane.most_attempts = std::max(lane.most_attempts, attempts);
}

bool Sender::answered(Lane& lane, const Request& request, int port, int status, const std::string& body) {
    ++lane.answers[std::to_string(status)];
    if (status >= 200 && status < 300) {
        if (!counts_add_up(body, request.keys.size())) {
            // Not a loss (the checker decides that), but not the documented answer either.
            if (++lane.answers["2xx whose stored + duplicates is not the events sent"] == 1)
                say("note: " + request.source->name + " lane " + std::to_string(lane.index) + " request " +
                    std::to_string(request.number) + " of " + std::to_string(request.keys.size()) +
                    " event(s) answered " + std::to_string(status) + " " + body.substr(0, 200));
        }
        ++lane.acknowledged;
        for (const auto& key : request.keys) lane.sent.acknowledged.insert(key);
        return true;
    }
    // Every request is well formed and rightly signed for a source that
    // exists: only a 5xx (the database away, a full queue) is to be retried.
    if (status >= 400 && status < 500) {
        ++lane.refused;
        const std::string evidence = request.source->name + " request " + std::to_string(request.number) + " of lane " +
                                     std::to_string(lane.index) + " answered " + std::to_string(status) +
                                     " by the receiver on port " + std::to_string(port) + ": " + body.substr(0, 200);
        // Counted all, shown a few: a refusal repeats at every retry.
        if (lane.refused <= kRefusalsShown) tally_.anomaly("push_refused", evidence);
    }
    return false;
}

std::map<std::string, SentEvents> Sender::sent() const {
    std::map<std::string, SentEvents> out;
    for (const auto& lane : lanes_) {
        auto& s = out[lane->source->name];
        s.payloads.insert(lane->sent.payloads.begin(), lane->sent.payloads.end());
        s.acknowledged.insert(lane->sent.acknowledged.begin(), lane->sent.acknowledged.end());
        s.lanes.push_back(lane->sent.lanes[0]);
    }
    return out;
}

std::vector<std::string> Sender::figures() const {
    long requests = 0, acknowledged = 0, attempts = 0, most = 0;
    std::map<std::string, long> answers;
    for (const auto& lane : lanes_) {
        requests += lane->requests;
        acknowledged += lane->acknowledged;
        attempts += lane->attempts;
        most = std::max(most, lane->most_attempts);
        for (const auto& [what, n] : lane->answers) answers[what] += n;
    }
    std::string by_answer;
    for (const auto& [what, n] : answers)
        by_answer += (by_answer.empty() ? "" : ", ") + what + " x" + std::to_string(n);
    return {"sender: " + std::to_string(requests) + " requests, " + std::to_string(acknowledged) + " acknowledged, " +
                std::to_string(attempts) + " attempts (at most " + std::to_string(most) + " for one request)",
            "sender answers: " + by_answer};
}

}  // namespace tributary::crash
