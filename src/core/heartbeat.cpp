#include "heartbeat.h"

#include <algorithm>
#include <vector>

#include <spdlog/spdlog.h>

#include "errors.h"
#include "stale_session.h"

namespace tributary {

namespace {

/// After a failed extend, try again soon: the lease is running out.
constexpr std::chrono::milliseconds kRetryAfterError{500};

}  // namespace

Heartbeat::Ticket::~Ticket() {
    if (heartbeat_) heartbeat_->untrack(key_);
}

bool Heartbeat::Ticket::lost() const {
    std::lock_guard<std::mutex> guard(heartbeat_->mutex_);
    return heartbeat_->entries_.at(key_).lost;
}

Heartbeat::time_point Heartbeat::Ticket::lease_ends() const {
    std::lock_guard<std::mutex> guard(heartbeat_->mutex_);
    return heartbeat_->entries_.at(key_).lease_ends;
}

Heartbeat::Heartbeat(std::unique_ptr<GroupLog> log, std::chrono::milliseconds lease, std::string context,
                     OutageLog& outages)
    : log_(std::move(log)),
      lease_(lease),
      every_(std::max(std::chrono::milliseconds(1), lease / 3)),
      context_(std::move(context)),
      outages_(outages),
      thread_([this] { loop(); }) {}

Heartbeat::~Heartbeat() {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        closing_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

Heartbeat::Ticket Heartbeat::track(const LeasedBatch& batch, time_point read_started) {
    std::uint64_t key;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        key = next_key_++;
        entries_[key] = Entry{batch.id, batch.token, read_started + every_, read_started + lease_, false};
    }
    changed_.notify_all();
    return Ticket(*this, key);
}

void Heartbeat::untrack(std::uint64_t key) {
    std::lock_guard<std::mutex> guard(mutex_);
    entries_.erase(key);
}

Heartbeat::Extended Heartbeat::extend(std::int64_t batch_id, const std::string& token) {
    try {
        const bool extended = retry_stale_session([&] { return log_->extend(batch_id, token); });
        outages_.up();
        return extended ? Extended::yes : Extended::lost;
    } catch (const DatabaseUnavailable& e) {
        outages_.down(e.what());
    } catch (const std::exception& e) {
        spdlog::warn("{} batch={} could not extend the lease, retrying: {}", context_, batch_id, e.what());
    }
    return Extended::unknown;
}

void Heartbeat::loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!closing_) {
        const auto now = std::chrono::steady_clock::now();
        std::vector<Due> due;
        auto wake = now + every_;
        for (const auto& [key, entry] : entries_) {
            if (entry.lost) continue;
            if (entry.next_due <= now) due.push_back(Due{key, entry.batch_id, entry.token});
            else wake = std::min(wake, entry.next_due);
        }
        if (due.empty()) {
            changed_.wait_until(lock, wake);
            continue;
        }
        // Extend without the lock: workers must not wait on the database to
        // start or finish tracking a batch.
        lock.unlock();
        std::vector<Extended> results;
        std::vector<time_point> started;
        for (const auto& d : due) {
            started.push_back(std::chrono::steady_clock::now());
            results.push_back(extend(d.batch_id, d.token));
        }
        lock.lock();
        for (std::size_t i = 0; i < results.size(); ++i) {
            const auto found = entries_.find(due[i].key);
            if (found == entries_.end()) continue;  // settled meanwhile
            Entry& entry = found->second;
            switch (results[i]) {
                case Extended::yes:
                    entry.lease_ends = started[i] + lease_;
                    entry.next_due = started[i] + every_;
                    break;
                case Extended::lost:
                    entry.lost = true;
                    spdlog::warn(
                        "{} batch={} lease lost to another consumer while its handler runs; its result "
                        "will not count",
                        context_, entry.batch_id);
                    break;
                case Extended::unknown:
                    entry.next_due = std::chrono::steady_clock::now() + std::min(every_, kRetryAfterError);
                    break;
            }
        }
    }
}

}  // namespace tributary
