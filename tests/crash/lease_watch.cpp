#include "lease_watch.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include <pqxx/pqxx>

#include "cluster.h"
#include "report.h"

namespace tributary::crash {

namespace {

constexpr auto kPollEvery = std::chrono::milliseconds(100);

}  // namespace

LeaseWatch::LeaseWatch(const Cluster& cluster, Tally& tally, std::string role)
    : cluster_(cluster),
      tally_(tally),
      role_(std::move(role)),
      anomaly_(role_ + "_lease"),
      read_lease_("SELECT coalesce(holder, ''), token, expires_at > clock_timestamp() FROM tributary." + role_ +
                  "_lease"),
      thread_([this] { run(); }) {}

LeaseWatch::~LeaseWatch() { stop(); }

void LeaseWatch::stop() {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void LeaseWatch::observe(const Reading& r, double t) {
    if (first_token_ < 0) first_token_ = r.token;
    if (!r.holder.empty()) holders_.insert(r.holder);
    if (have_last_) {
        if (r.token < last_.token)
            tally_.anomaly(anomaly_, "token went back from " + std::to_string(last_.token) + " to " +
                                         std::to_string(r.token) + " at " + std::to_string(t) + " s");
        else if (r.holder != last_.holder && r.token == last_.token)
            tally_.anomaly(anomaly_, "holder changed from " + last_.holder + " to " + r.holder +
                                         " under the same token " + std::to_string(r.token));
        if (r.token > last_.token) handovers_ += r.token - last_.token;
    }
    // How long nobody held it: from the first reading without a live holder
    // to the next with one (the database's restarts included), once some
    // loader first took it.
    ever_live_ = ever_live_ || r.live;
    if (!r.live && ever_live_ && vacant_since_ < 0) vacant_since_ = t;
    if (r.live && vacant_since_ >= 0) {
        longest_vacancy_ = std::max(longest_vacancy_, t - vacant_since_);
        vacant_total_ += t - vacant_since_;
        vacant_since_ = -1;
    }
    last_ = r;
    have_last_ = true;
}

void LeaseWatch::run() {
    std::unique_ptr<pqxx::connection> connection;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        lock.unlock();
        Reading r;
        bool ok = false;
        try {
            if (!connection)
                connection =
                    std::make_unique<pqxx::connection>(cluster_.url("crash-lease-watch") + "&connect_timeout=2");
            pqxx::nontransaction tx(*connection);
            const auto row = tx.exec1(read_lease_);
            r = {row[0].as<std::string>(), row[1].as<long long>(), row[2].as<bool>()};
            ok = true;
        } catch (const std::exception&) {
            connection.reset();  // the database restarts: read again once it is back
        }
        const double t = elapsed_s();
        lock.lock();
        if (ok) observe(r, t);
        wake_.wait_for(lock, kPollEvery, [this] { return stopping_; });
    }
}

namespace {

struct FinalLease {
    std::string holder, renewed_at;
    long long token = 0;
    bool live = false, released = false;
};

FinalLease read_final(const Cluster& cluster, const std::string& role) {
    pqxx::connection connection(cluster.url("crash-lease-watch"));
    pqxx::nontransaction tx(connection);
    const auto row = tx.exec1(
        "SELECT coalesce(holder, ''), coalesce(renewed_at::text, ''), token, expires_at > clock_timestamp(),"
        " expires_at = '-infinity' FROM tributary." +
        role + "_lease");
    return {row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<long long>(), row[3].as<bool>(),
            row[4].as<bool>()};
}

}  // namespace

void LeaseWatch::check_released(std::chrono::milliseconds lease) {
    stop();
    const auto first = read_final(cluster_, role_);
    std::string ran_out;
    if (first.live) {
        // A holder that lost its session as it stopped (killed by a
        // fault just before) cannot release the lease: it runs out by
        // itself, and meanwhile nobody may renew it.
        std::this_thread::sleep_for(lease + std::chrono::milliseconds(500));
        const auto later = read_final(cluster_, role_);
        if (later.live || later.token != first.token || later.renewed_at != first.renewed_at)
            tally_.anomaly(anomaly_, "every process stopped, yet the lease of " + first.holder + " (token " +
                                         std::to_string(first.token) + ") was renewed or " + "taken again: now " +
                                         later.holder + ", token " + std::to_string(later.token));
        ran_out = " (it ran out by itself)";
    }
    std::lock_guard<std::mutex> guard(mutex_);
    observe({first.holder, first.token, first.live}, elapsed_s());
    end_state_ = first.released ? "released at the end" : "not released at the end" + ran_out;
}

std::vector<std::string> LeaseWatch::figures() const {
    std::lock_guard<std::mutex> guard(mutex_);
    char line[400];
    std::snprintf(line, sizeof line,
                  "%s lease: token %lld -> %lld (%ld new holder(s)), %zu holder(s) seen; no live holder "
                  "for %.1f s in all, at most %.1f s at a time; %s",
                  role_.c_str(), first_token_, last_.token, handovers_, holders_.size(), vacant_total_,
                  longest_vacancy_, end_state_.c_str());
    return {line};
}

}  // namespace tributary::crash
