// The group commit (src/webhook/group_committer): requests that arrive while
// a commit is on the wire go together in the next one; a bounded queue; an
// unavailable database answers everyone, a poisonous request only itself.
// Threads submit, the main thread asserts: every wait is for a state of the
// fake or the committer, never for a time.
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "support/fake_pushed_events.h"
#include "webhook/group_committer.h"

using namespace tributary::webhook;
using tributary::fakes::FakePushedEventStore;
using Kind = CommitOutcome::Kind;

namespace {

PushedBatch batch_of(int source_id, std::vector<std::string> keys) {
    PushedBatch batch;
    batch.source_id = source_id;
    batch.source = "source" + std::to_string(source_id);
    for (auto& key : keys) batch.events.push_back({key, "{\"k\":\"" + key + "\"}"});
    return batch;
}

void wait_until(const std::function<bool()>& done) {
    while (!done()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

/// Submits `batch` on its own thread; the outcome is read after join().
struct Submitter {
    PushedBatch batch;
    CommitOutcome outcome;
    std::thread thread;

    Submitter(GroupCommitter& committer, PushedBatch b) : batch(std::move(b)) {
        thread = std::thread([this, &committer] { outcome = committer.submit(batch); });
    }
    void join() { thread.join(); }
};

}  // namespace

TEST_CASE("a lone request is committed at once and answered with what it stored", "[webhook]") {
    FakePushedEventStore store;
    std::size_t committed_requests = 0, committed_events = 0;
    GroupCommitter committer(store, {}, [&](std::size_t requests, std::size_t events) {
        committed_requests += requests;
        committed_events += events;
    });
    auto outcome = committer.submit(batch_of(1, {"a", "b", "a"}));
    CHECK(outcome.kind == Kind::stored);
    CHECK(outcome.stored == 2);
    outcome = committer.submit(batch_of(1, {"b", "c"}));
    CHECK(outcome.stored == 1);
    CHECK(store.stored(1) == 3);
    CHECK(committed_requests == 2);
    CHECK(committed_events == 5);

    store.set_accepting(2, false);
    CHECK(committer.submit(batch_of(2, {"x"})).kind == Kind::not_accepting);
    CHECK(store.stored(2) == 0);
}

TEST_CASE("requests arriving during a commit go together in the next one", "[webhook]") {
    FakePushedEventStore store;
    GroupCommitter committer(store, {});
    store.hold();
    Submitter first(committer, batch_of(1, {"first"}));
    store.wait_for_calls(1);  // its commit is on the wire

    constexpr int kSenders = 8;
    std::vector<std::unique_ptr<Submitter>> senders;
    for (int i = 0; i < kSenders; ++i)
        senders.push_back(std::make_unique<Submitter>(committer, batch_of(1 + i % 2, {"k" + std::to_string(i)})));
    wait_until([&] { return committer.waiting() == kSenders; });
    store.release();
    first.join();
    for (auto& sender : senders) sender->join();

    CHECK(first.outcome.kind == Kind::stored);
    for (auto& sender : senders) {
        CHECK(sender->outcome.kind == Kind::stored);
        CHECK(sender->outcome.stored == 1);
    }
    const auto calls = store.calls();
    REQUIRE(calls.size() == 2);
    CHECK(calls[1].sources.size() == kSenders);
    CHECK(store.stored(1) + store.stored(2) == kSenders + 1);
}

TEST_CASE("fewer waiting than the last group carried: the group waits for the others (up to gather)", "[webhook]") {
    FakePushedEventStore store;
    GroupCommitter::Options options;
    options.gather = std::chrono::hours(1);  // longer than the test: only the requests can end the wait
    GroupCommitter committer(store, options);
    store.hold();
    Submitter first(committer, batch_of(1, {"first"}));
    store.wait_for_calls(1);
    constexpr int kSenders = 4;
    std::vector<std::unique_ptr<Submitter>> senders;
    for (int i = 0; i < kSenders; ++i)
        senders.push_back(std::make_unique<Submitter>(committer, batch_of(1, {"a" + std::to_string(i)})));
    wait_until([&] { return committer.waiting() == kSenders; });
    store.release();
    first.join();
    for (auto& sender : senders) sender->join();  // a group of 4: the next one waits for 4

    senders.clear();
    for (int i = 0; i < kSenders; ++i) {
        senders.push_back(std::make_unique<Submitter>(committer, batch_of(1, {"b" + std::to_string(i)})));
        if (i + 1 < kSenders) wait_until([&] { return committer.waiting() == static_cast<std::size_t>(i + 1); });
    }
    for (auto& sender : senders) sender->join();

    const auto calls = store.calls();
    REQUIRE(calls.size() == 3);
    CHECK(calls[1].sources.size() == kSenders);
    CHECK(calls[2].sources.size() == kSenders);  // not 1, 2 or 3: the first three waited for the fourth
}

TEST_CASE("a group holds at most max_commit_events; a request is never split", "[webhook]") {
    FakePushedEventStore store;
    GroupCommitter::Options options;
    options.max_commit_events = 4;
    GroupCommitter committer(store, options);
    store.hold();
    Submitter first(committer, batch_of(1, {"a", "b", "c", "d", "e", "f"}));  // larger than a group: alone
    store.wait_for_calls(1);
    std::vector<std::unique_ptr<Submitter>> senders;
    for (int i = 0; i < 3; ++i) {
        senders.push_back(
            std::make_unique<Submitter>(committer, batch_of(1, {"x" + std::to_string(i), "y" + std::to_string(i)})));
        wait_until([&] { return committer.waiting() == static_cast<std::size_t>(i + 1); });  // in this order
    }
    store.release();
    first.join();
    for (auto& sender : senders) sender->join();
    const auto calls = store.calls();
    REQUIRE(calls.size() == 3);
    CHECK(calls[0].events() == 6);
    CHECK(calls[1].sizes == std::vector<std::size_t>{2, 2});
    CHECK(calls[2].sizes == std::vector<std::size_t>{2});
    CHECK(store.stored(1) == 12);
}

TEST_CASE("a full queue refuses at once, without waiting", "[webhook]") {
    FakePushedEventStore store;
    GroupCommitter::Options options;
    options.max_queued_events = 3;
    GroupCommitter committer(store, options);
    store.hold();
    Submitter first(committer, batch_of(1, {"a", "b"}));
    store.wait_for_calls(1);
    // On this thread: were it to wait for the held commit, the test would hang.
    CHECK(committer.submit(batch_of(1, {"c", "d"})).kind == Kind::queue_full);
    store.release();
    first.join();
    CHECK(first.outcome.stored == 2);
    CHECK(store.events(1).count("c") == 0);
    // Nothing held: even a request over the limit is tried.
    CHECK(committer.submit(batch_of(1, {"c", "d", "e", "f"})).stored == 4);
}

TEST_CASE("a full queue counts payload bytes too", "[webhook]") {
    FakePushedEventStore store;
    GroupCommitter::Options options;
    options.max_queued_bytes = 30;
    GroupCommitter committer(store, options);
    store.hold();
    Submitter first(committer, batch_of(1, {"aaaaaaaaaa"}));  // 27 bytes of key and payload
    store.wait_for_calls(1);
    CHECK(committer.submit(batch_of(1, {"b"})).kind == Kind::queue_full);
    store.release();
    first.join();
    CHECK(first.outcome.kind == Kind::stored);
}

TEST_CASE("the database unavailable: every request of the group is answered unavailable", "[webhook]") {
    FakePushedEventStore store;
    GroupCommitter committer(store, {});
    store.hold();
    Submitter first(committer, batch_of(1, {"a"}));
    store.wait_for_calls(1);
    Submitter second(committer, batch_of(1, {"b"}));
    Submitter third(committer, batch_of(2, {"c"}));
    wait_until([&] { return committer.waiting() == 2; });
    store.set_unavailable(true);
    store.release();
    first.join();
    second.join();
    third.join();
    CHECK(first.outcome.kind == Kind::unavailable);
    CHECK(second.outcome.kind == Kind::unavailable);
    CHECK(third.outcome.kind == Kind::unavailable);
    CHECK(store.calls().size() == 2);  // no retry one by one: the next sender's retry is the retry
    store.set_unavailable(false);
    CHECK(committer.submit(batch_of(1, {"a"})).stored == 1);
}

TEST_CASE("a poisonous request fails alone; the rest of its group is stored", "[webhook]") {
    FakePushedEventStore store;
    store.poison_key("poison");
    GroupCommitter committer(store, {});
    store.hold();
    Submitter first(committer, batch_of(1, {"a"}));
    store.wait_for_calls(1);
    Submitter good(committer, batch_of(1, {"b"}));
    wait_until([&] { return committer.waiting() == 1; });
    Submitter bad(committer, batch_of(1, {"c", "poison"}));
    wait_until([&] { return committer.waiting() == 2; });
    Submitter other(committer, batch_of(2, {"d"}));
    wait_until([&] { return committer.waiting() == 3; });
    store.release();
    for (Submitter* s : {&first, &good, &bad, &other}) s->join();
    CHECK(first.outcome.stored == 1);
    CHECK(good.outcome.kind == Kind::stored);
    CHECK(good.outcome.stored == 1);
    CHECK(bad.outcome.kind == Kind::failed);
    CHECK(other.outcome.kind == Kind::stored);
    CHECK(store.events(1).count("c") == 0);  // all or nothing
    CHECK(store.stored(1) == 2);
    CHECK(store.stored(2) == 1);
    const auto calls = store.calls();
    REQUIRE(calls.size() == 5);  // first; the group of three; each of them again
    CHECK(calls[1].sources.size() == 3);
}

TEST_CASE("stopping answers the waiting requests unavailable; the commit on the wire finishes", "[webhook]") {
    FakePushedEventStore store;
    GroupCommitter committer(store, {});
    store.hold();
    Submitter first(committer, batch_of(1, {"a"}));
    store.wait_for_calls(1);
    Submitter waiting(committer, batch_of(1, {"b"}));
    wait_until([&] { return committer.waiting() == 1; });
    std::thread stopper([&] { committer.stop(); });
    waiting.join();  // answered while the commit on the wire is still held
    CHECK(waiting.outcome.kind == Kind::unavailable);
    store.release();
    stopper.join();
    first.join();
    CHECK(first.outcome.kind == Kind::stored);
    CHECK(committer.submit(batch_of(1, {"c"})).kind == Kind::unavailable);
    CHECK(store.stored(1) == 1);
}
