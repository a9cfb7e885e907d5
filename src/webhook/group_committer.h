#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "pushed_events.h"

namespace tributary::webhook {

/// What became of one submitted request.
struct CommitOutcome {
    enum class Kind {
        stored,         ///< committed: `stored` of its events were new
        not_accepting,  ///< its source no longer takes pushes: nothing stored
        unavailable,    ///< the database could not be reached, or the committer stopped: outcome unknown
        queue_full,     ///< refused at once: too much is waiting already
        failed,         ///< the store refused this request for what it holds (logged)
    };
    Kind kind = Kind::stored;
    std::size_t stored = 0;
};

/// The group commit: requests wait in a bounded queue, and one committer
/// thread stores everything waiting in one PushedEventStore::store() call, so
/// a thousand senders cost a few transactions, not a thousand.
///
/// Mostly no timer gathers a group: while one commit is on the wire, the
/// requests arriving meanwhile wait, and the next commit takes them all. An
/// idle receiver commits a lone request at once; a busy one commits bigger
/// groups as the database gets slower, which is when it matters. One wait
/// only: when fewer requests wait than the last group carried, the committer
/// gives the others up to `gather` to come. Without it, senders that each
/// send again as soon as they are answered split into two halves that take
/// turns (one committing while the other gathers): half the group, twice the
/// commits (bench/webhook, slow WAL flushes: 16 instead of 31 events per
/// commit, 0.4 instead of 0.6-0.9 of the ceiling).
class GroupCommitter {
public:
    struct Options {
        /// Events and payload bytes held (waiting or being committed); a
        /// request that would go beyond is refused at once (queue_full),
        /// unless nothing is held: one request is never too big to try.
        std::size_t max_queued_events = 20000;
        std::size_t max_queued_bytes = 64 * 1024 * 1024;
        /// Events of one store() call at most (a request is never split: one
        /// larger than this goes alone).
        std::size_t max_commit_events = 5000;
        /// How long a group may wait for as many requests as the last one
        /// carried (0: never waits).
        std::chrono::microseconds gather{2000};
    };
    /// Told after each store() call that committed: requests and events it carried.
    using OnCommit = std::function<void(std::size_t requests, std::size_t events)>;

    GroupCommitter(PushedEventStore& store, Options options, OnCommit on_commit = {});
    ~GroupCommitter();  ///< stop()
    GroupCommitter(const GroupCommitter&) = delete;
    GroupCommitter& operator=(const GroupCommitter&) = delete;

    /// Queues `batch` (which must live until this returns) and blocks until
    /// its commit is done; queue_full without waiting. Thread-safe.
    CommitOutcome submit(const PushedBatch& batch);

    /// Answers every waiting request `unavailable`, lets a commit on the
    /// wire finish, and ends the committer thread. Later submits are
    /// answered `unavailable` at once.
    void stop();

    /// Requests waiting for a commit (not those in the one on the wire).
    std::size_t waiting() const;

private:
    struct Waiter;

    void run();
    std::vector<Waiter*> take_group();
    std::vector<CommitOutcome> commit(const std::vector<Waiter*>& group);
    std::vector<CommitOutcome> commit_one_by_one(const std::vector<Waiter*>& group);
    void answer(Waiter& waiter, CommitOutcome outcome);

    PushedEventStore& store_;
    const Options options_;
    const OnCommit on_commit_;

    mutable std::mutex mutex_;
    std::condition_variable work_;
    std::deque<Waiter*> queue_;
    std::size_t held_events_ = 0;
    std::size_t held_bytes_ = 0;
    bool stopping_ = false;
    std::size_t last_group_ = 1;  ///< requests the last store() call carried
    bool database_down_ = false;  ///< the committer thread's own: says an outage once
    std::thread thread_;
};

}  // namespace tributary::webhook
