#include "fake_pushed_events.h"

#include <stdexcept>

namespace tributary::fakes {

std::size_t FakePushedEventStore::Call::events() const {
    std::size_t n = 0;
    for (const std::size_t size : sizes) n += size;
    return n;
}

std::vector<std::optional<std::size_t>> FakePushedEventStore::store(
    const std::vector<const webhook::PushedBatch*>& requests) {
    std::unique_lock lock(mutex_);
    Call call;
    for (const webhook::PushedBatch* request : requests) {
        call.sources.push_back(request->source_id);
        call.sizes.push_back(request->events.size());
    }
    calls_.push_back(call);
    ++arrived_;
    changed_.notify_all();
    changed_.wait(lock, [&] { return !held_; });

    if (unavailable_) throw webhook::StoreUnavailable("fake: the database is unavailable");
    for (const webhook::PushedBatch* request : requests) {
        for (const webhook::PushedEvent& event : request->events) {
            if (poisoned_.count(event.key)) throw std::runtime_error("fake: refused event " + event.key);
        }
    }
    // One transaction: nothing above stored anything, everything below succeeds.
    std::vector<std::optional<std::size_t>> outcome;
    for (const webhook::PushedBatch* request : requests) {
        if (refusing_.count(request->source_id)) {
            outcome.emplace_back(std::nullopt);
            continue;
        }
        auto& stored = events_[request->source_id];
        std::size_t n = 0;
        for (const webhook::PushedEvent& event : request->events) {
            if (stored.emplace(event.key, event.payload).second) ++n;
        }
        outcome.emplace_back(n);
    }
    return outcome;
}

void FakePushedEventStore::set_accepting(int source_id, bool accepting) {
    std::lock_guard lock(mutex_);
    if (accepting) {
        refusing_.erase(source_id);
    } else {
        refusing_.insert(source_id);
    }
}

void FakePushedEventStore::set_unavailable(bool unavailable) {
    std::lock_guard lock(mutex_);
    unavailable_ = unavailable;
}

void FakePushedEventStore::poison_key(std::string key) {
    std::lock_guard lock(mutex_);
    poisoned_.insert(std::move(key));
}

void FakePushedEventStore::hold() {
    std::lock_guard lock(mutex_);
    held_ = true;
}

void FakePushedEventStore::release() {
    std::lock_guard lock(mutex_);
    held_ = false;
    changed_.notify_all();
}

void FakePushedEventStore::wait_for_calls(std::size_t n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return arrived_ >= n; });
}

std::vector<FakePushedEventStore::Call> FakePushedEventStore::calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
}

std::map<std::string, std::string> FakePushedEventStore::events(int source_id) const {
    std::lock_guard lock(mutex_);
    const auto it = events_.find(source_id);
    return it == events_.end() ? std::map<std::string, std::string>{} : it->second;
}

std::size_t FakePushedEventStore::stored(int source_id) const { return events(source_id).size(); }

std::vector<webhook::PushedSource> FakePushedSources::pushed_sources() {
    std::lock_guard lock(mutex_);
    ++reads_;
    if (unavailable_) throw webhook::StoreUnavailable("fake: the catalogue is unavailable");
    return sources_;
}

void FakePushedSources::set(std::vector<webhook::PushedSource> sources) {
    std::lock_guard lock(mutex_);
    sources_ = std::move(sources);
}

void FakePushedSources::set_unavailable(bool unavailable) {
    std::lock_guard lock(mutex_);
    unavailable_ = unavailable;
}

std::size_t FakePushedSources::reads() const {
    std::lock_guard lock(mutex_);
    return reads_;
}

}  // namespace tributary::fakes
