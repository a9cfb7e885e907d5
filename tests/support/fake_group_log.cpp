#include "support/fake_group_log.h"

#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/errors.h"

namespace tributary::fakes {

void FakeGroupState::produce(int n) {
    std::lock_guard<std::mutex> guard(mutex);
    for (int k = 0; k < n; ++k) {
        const auto i = ++last_seq;
        fresh.push_back(LoggedEvent{i, i % 2 ? "orders.eu" : "orders.us", i, std::to_string(i),
                                    "{\"n\":" + std::to_string(i) + "}"});
    }
}

void FakeGroupState::produce_keyed(const std::vector<std::string>& keys) {
    std::lock_guard<std::mutex> guard(mutex);
    for (const auto& key : keys)
        fresh.push_back(
            LoggedEvent{++last_seq, "stripe.events", std::nullopt, key, nlohmann::json{{"key", key}}.dump()});
}

std::vector<std::int64_t> FakeGroupState::acked() const {
    std::lock_guard<std::mutex> guard(mutex);
    return acked_seqs;
}

void FakeGroupState::steal(std::int64_t batch_id) {
    std::lock_guard<std::mutex> guard(mutex);
    auto& batch = batches.at(batch_id);
    batch.token = "stolen-" + std::to_string(next_token++);
    ++batch.delivery;
}

std::size_t FakeGroupState::in_flight() const {
    std::lock_guard<std::mutex> guard(mutex);
    return batches.size();
}

LeasedBatch FakeGroupLog::lease(std::int64_t id, FakeGroupState::Batch& batch) {
    batch.token = "token-" + std::to_string(state_.next_token++);
    batch.leased_until = FakeGroupState::steady::now() + state_.lease;
    return LeasedBatch{id, batch.token, batch.delivery, batch.events};
}

std::optional<LeasedBatch> FakeGroupLog::read(const std::string&, int max_events) {
    std::lock_guard<std::mutex> guard(state_.mutex);
    ++state_.reads;
    if (state_.group_missing) throw GroupNotFound("fake: no consumer group named 'g'");
    if (state_.failing_reads > 0) {
        --state_.failing_reads;
        throw DatabaseUnavailable("fake: database away");
    }
    return lease_next(max_events);
}

NextBatch FakeGroupLog::next(const std::string&, int max_events, const LeasedBatch* previous) {
    std::lock_guard<std::mutex> guard(state_.mutex);
    ++state_.nexts;
    if (previous) ++state_.nexts_with_ack;
    // As one transaction: a missing group or a failure undoes the ack too.
    if (state_.group_missing) throw GroupNotFound("fake: no consumer group named 'g'");
    if (state_.failing_nexts > 0) {
        --state_.failing_nexts;
        throw DatabaseUnavailable("fake: database away");
    }
    if (previous && state_.failing_acks > 0) {
        --state_.failing_acks;
        throw DatabaseUnavailable("fake: connection lost");
    }
    NextBatch out;
    if (previous) out.previous_acked = ack_locked(*previous);
    out.batch = lease_next(max_events);
    if (previous && state_.lost_ack_replies > 0) {
        --state_.lost_ack_replies;
        throw DatabaseUnavailable("fake: connection lost after the commit");
    }
    return out;
}

std::optional<LeasedBatch> FakeGroupLog::lease_next(int max_events) {
    const auto now = FakeGroupState::steady::now();
    for (auto& [id, batch] : state_.batches)
        if (batch.leased_until < now) {
            ++batch.delivery;
            return lease(id, batch);
        }
    const auto id = state_.next_batch++;
    FakeGroupState::Batch batch;
    if (!state_.retries.empty()) {
        batch.events.push_back(state_.retries.front().first);
        batch.delivery = state_.retries.front().second + 1;
        state_.retries.pop_front();
    } else {
        while (!state_.fresh.empty() && static_cast<int>(batch.events.size()) < max_events) {
            batch.events.push_back(state_.fresh.front());
            state_.fresh.pop_front();
        }
    }
    if (batch.events.empty()) return std::nullopt;
    return lease(id, state_.batches[id] = std::move(batch));
}

bool FakeGroupLog::ack(const LeasedBatch& leased) {
    std::lock_guard<std::mutex> guard(state_.mutex);
    ++state_.acks;
    if (state_.failing_acks > 0) {
        --state_.failing_acks;
        throw DatabaseUnavailable("fake: connection lost");
    }
    return ack_locked(leased);
}

bool FakeGroupLog::ack_locked(const LeasedBatch& leased) {
    const auto found = state_.batches.find(leased.id);
    if (found == state_.batches.end() || found->second.token != leased.token) return false;
    if (found->second.leased_until < FakeGroupState::steady::now()) ++state_.expired_acks;
    for (const auto& e : found->second.events) state_.acked_seqs.push_back(e.seq);
    state_.batches.erase(found);
    return true;
}

bool FakeGroupLog::fail(const LeasedBatch& leased, const std::string& error) {
    std::lock_guard<std::mutex> guard(state_.mutex);
    ++state_.fails;
    const auto found = state_.batches.find(leased.id);
    if (found == state_.batches.end() || found->second.token != leased.token) return false;
    state_.errors.push_back(error);
    for (const auto& e : found->second.events) state_.retries.emplace_back(e, found->second.delivery);
    state_.batches.erase(found);
    return true;
}

bool FakeGroupLog::extend(std::int64_t batch_id, const std::string& token) {
    std::lock_guard<std::mutex> guard(state_.mutex);
    ++state_.extends;
    if (state_.failing_extends) throw DatabaseUnavailable("fake: heartbeat cut off");
    const auto found = state_.batches.find(batch_id);
    if (found == state_.batches.end() || found->second.token != token) return false;
    found->second.leased_until = FakeGroupState::steady::now() + state_.lease;
    return true;
}

int FakeGroupLog::leave(const std::string& consumer) {
    std::lock_guard<std::mutex> guard(state_.mutex);
    if (state_.group_missing) throw GroupNotFound("fake: no such group");
    state_.left.push_back(consumer);
    return 0;
}

bool FakeGroupLog::awaits_lanes(const std::string&) {
    std::lock_guard<std::mutex> guard(state_.mutex);
    if (state_.group_missing) throw GroupNotFound("fake: no such group");
    ++state_.awaits_lanes_calls;
    if (state_.lanes_coming == 0) return false;
    --state_.lanes_coming;
    return true;
}

HandlerResult FakeBatchHandler::handle(const LeasedBatch& batch, const StopSignal& abandon) {
    ++calls;
    const int now = ++in_hand;
    for (int most = most_in_hand; now > most && !most_in_hand.compare_exchange_weak(most, now);) {
    }
    const auto result = behaviour_ ? behaviour_(batch, abandon) : HandlerResult::success();
    --in_hand;
    return result;
}

void RecordingWakeup::wait(std::chrono::milliseconds longest) {
    std::size_t count;
    {
        std::lock_guard<std::mutex> guard(mutex_);
        waits_.push_back(longest);
        count = waits_.size();
    }
    std::this_thread::sleep_for(longest / 1000);
    if (on_wait) on_wait(count);
}

std::vector<std::chrono::milliseconds> RecordingWakeup::waits() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return waits_;
}

void Latch::open() {
    {
        std::lock_guard<std::mutex> guard(mutex_);
        open_ = true;
    }
    opened_.notify_all();
}

bool Latch::wait(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return opened_.wait_for(lock, timeout, [this] { return open_; });
}

bool Latch::is_open() const {
    std::lock_guard<std::mutex> guard(mutex_);
    return open_;
}

}  // namespace tributary::fakes
