#include "group_committer.h"

#include <set>
#include <string>

#include <spdlog/spdlog.h>

namespace tributary::webhook {

/// A submitted request, on its submitter's stack until it is answered.
struct GroupCommitter::Waiter {
    const PushedBatch* batch = nullptr;
    std::size_t events = 0;
    std::size_t bytes = 0;
    std::optional<CommitOutcome> outcome;
    std::condition_variable answered;
};

namespace {

std::size_t bytes_of(const PushedBatch& batch) {
    std::size_t bytes = 0;
    for (const PushedEvent& event : batch.events) bytes += event.payload.size() + event.key.size();
    return bytes;
}

// How a log line names the sources of a group: each once.
std::string sources_of(const std::vector<const PushedBatch*>& requests) {
    std::set<std::string> names;
    for (const PushedBatch* request : requests) names.insert(request->source);
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ",") + name;
    return out;
}

CommitOutcome outcome_of(const std::optional<std::size_t>& stored) {
    if (!stored) return {CommitOutcome::Kind::not_accepting, 0};
    return {CommitOutcome::Kind::stored, *stored};
}

}  // namespace

GroupCommitter::GroupCommitter(PushedEventStore& store, Options options, OnCommit on_commit)
    : store_(store), options_(options), on_commit_(std::move(on_commit)), thread_([this] { run(); }) {}

GroupCommitter::~GroupCommitter() { stop(); }

CommitOutcome GroupCommitter::submit(const PushedBatch& batch) {
    Waiter waiter;
    waiter.batch = &batch;
    waiter.events = batch.events.size();
    waiter.bytes = bytes_of(batch);
    std::unique_lock lock(mutex_);
    if (stopping_) return {CommitOutcome::Kind::unavailable, 0};
    const bool held = held_events_ > 0 || held_bytes_ > 0;
    if (held && (held_events_ + waiter.events > options_.max_queued_events ||
                 held_bytes_ + waiter.bytes > options_.max_queued_bytes))
        return {CommitOutcome::Kind::queue_full, 0};
    held_events_ += waiter.events;
    held_bytes_ += waiter.bytes;
    queue_.push_back(&waiter);
    work_.notify_one();
    waiter.answered.wait(lock, [&] { return waiter.outcome.has_value(); });
    return *waiter.outcome;
}

void GroupCommitter::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        for (Waiter* waiter : queue_) answer(*waiter, {CommitOutcome::Kind::unavailable, 0});
        queue_.clear();
    }
    work_.notify_one();
    if (thread_.joinable()) thread_.join();
}

std::size_t GroupCommitter::waiting() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
}

void GroupCommitter::run() {
    std::unique_lock lock(mutex_);
    for (;;) {
        work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.size() < last_group_ && options_.gather.count() > 0)
            work_.wait_for(lock, options_.gather, [&] { return stopping_ || queue_.size() >= last_group_; });
        if (stopping_) return;
        const std::vector<Waiter*> group = take_group();
        last_group_ = group.size();
        lock.unlock();
        const std::vector<CommitOutcome> outcomes = commit(group);
        lock.lock();
        for (std::size_t i = 0; i < group.size(); ++i) answer(*group[i], outcomes[i]);
    }
}

// Everything waiting, oldest first, up to max_commit_events (at least one
// request, however large).
std::vector<GroupCommitter::Waiter*> GroupCommitter::take_group() {
    std::vector<Waiter*> group;
    std::size_t events = 0;
    while (!queue_.empty()) {
        Waiter* next = queue_.front();
        if (!group.empty() && events + next->events > options_.max_commit_events) break;
        events += next->events;
        group.push_back(next);
        queue_.pop_front();
    }
    return group;
}

std::vector<CommitOutcome> GroupCommitter::commit(const std::vector<Waiter*>& group) {
    std::vector<const PushedBatch*> requests;
    std::size_t events = 0;
    for (const Waiter* waiter : group) {
        requests.push_back(waiter->batch);
        events += waiter->events;
    }
    try {
        const auto stored = store_.store(requests);
        if (stored.size() != requests.size())
            throw std::logic_error("the store answered " + std::to_string(stored.size()) + " requests of " +
                                   std::to_string(requests.size()));
        if (database_down_) spdlog::info("receiver: the database is reachable again; storing pushed events");
        database_down_ = false;
        if (on_commit_) on_commit_(requests.size(), events);
        std::vector<CommitOutcome> outcomes;
        for (const auto& one : stored) outcomes.push_back(outcome_of(one));
        return outcomes;
    } catch (const StoreUnavailable& e) {
        // Said once per outage: while it lasts every sender is answered 503 and retries.
        if (!database_down_)
            spdlog::error("receiver: the database is unavailable, requests answered 503 (sources {}): {}",
                          sources_of(requests), e.what());
        database_down_ = true;
        return std::vector<CommitOutcome>(group.size(), {CommitOutcome::Kind::unavailable, 0});
    } catch (const std::exception& e) {
        if (group.size() > 1) return commit_one_by_one(group);
        spdlog::error("source={} storing a pushed request of {} events failed: {}", requests.front()->source, events,
                      e.what());
        return {{CommitOutcome::Kind::failed, 0}};
    }
}

// A group the store refused for what it holds: each request alone, so that
// one poisonous request fails by itself and the others are stored.
std::vector<CommitOutcome> GroupCommitter::commit_one_by_one(const std::vector<Waiter*>& group) {
    std::vector<CommitOutcome> outcomes;
    for (Waiter* waiter : group) {
        const bool unreachable = !outcomes.empty() && outcomes.back().kind == CommitOutcome::Kind::unavailable;
        outcomes.push_back(unreachable ? CommitOutcome{CommitOutcome::Kind::unavailable, 0} : commit({waiter}).front());
    }
    return outcomes;
}

void GroupCommitter::answer(Waiter& waiter, CommitOutcome outcome) {
    // Under the lock: the waiter cannot see its outcome, return and take its
    // condition variable with it before notify_one() is done.
    held_events_ -= waiter.events;
    held_bytes_ -= waiter.bytes;
    waiter.outcome = outcome;
    waiter.answered.notify_one();
}

}  // namespace tributary::webhook
