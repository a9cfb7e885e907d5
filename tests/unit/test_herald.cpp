// The herald (an ElectedRole with the AnnounceStep) against the fake lease store and the fake
// log's head: it announces when it takes the lease, then only when an event became readable,
// never while a writer's open transaction holds the watermark back, and never once its lease
// is gone.

#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "core/errors.h"
#include "maintenance/announce_step.h"
#include "maintenance/elected_role.h"
#include "support/fake_lease_store.h"
#include "support/fake_log_announcer.h"
#include "support/fakes.h"

using namespace tributary;
using namespace std::chrono_literals;
using maintenance::ElectedRole;

namespace {

const maintenance::ElectionTimings kTimings{2s, 10ms};

/// Passes the beats on, failing while `down` says so (a database away).
class FlakyAnnouncer : public maintenance::LogAnnouncer {
public:
    explicit FlakyAnnouncer(maintenance::LogAnnouncer& real) : real_(real) {}
    maintenance::Announcement announce(const maintenance::MaintainerLease& lease,
                                       const std::vector<std::uint64_t>& since) override {
        if (down) throw DatabaseUnavailable("connection refused");
        return real_.announce(lease, since);
    }
    bool down = false;

private:
    maintenance::LogAnnouncer& real_;
};

}  // namespace

TEST_CASE("herald: announces on taking the lease, then only when an event became readable", "[herald]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    fakes::FakeLogAnnouncer log(store);
    maintenance::AnnounceStep step(log);
    ElectedRole herald("herald", store, {&step}, "h", kTimings);
    REQUIRE(herald.hold());
    herald.pass();  // a new tenure: what the last holder may have missed
    CHECK(log.notifications == 1);
    herald.pass();
    herald.pass();
    CHECK(log.notifications == 1);  // nothing new: silent

    log.commit(log.begin(), 3);
    herald.pass();
    CHECK(log.notifications == 2);
    log.commit(log.begin(), 0);  // a transaction that stored nothing
    herald.pass();
    CHECK(log.notifications == 2);
    CHECK(step.announced() == 2);
}

TEST_CASE("herald: an event behind an open transaction is announced only once that ends", "[herald]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    fakes::FakeLogAnnouncer log(store);
    maintenance::AnnounceStep step(log);
    ElectedRole herald("herald", store, {&step}, "h", kTimings);
    REQUIRE(herald.hold());
    herald.pass();
    const auto slow = log.begin();
    log.commit(log.begin(), 1);  // committed, but not readable: `slow` holds the watermark
    herald.pass();
    CHECK(log.notifications == 1);
    log.commit(slow, 0);
    herald.pass();
    CHECK(log.notifications == 2);
}

TEST_CASE("herald: of two, one announces; a lapsed holder announces no more, its successor at once", "[herald]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    fakes::FakeLogAnnouncer log(store);
    maintenance::AnnounceStep step_a(log), step_b(log);
    ElectedRole a("herald", store, {&step_a}, "a", kTimings), b("herald", store, {&step_b}, "b", kTimings);
    REQUIRE(a.hold());
    CHECK_FALSE(b.hold());
    a.pass();
    CHECK(step_a.announced() == 1);

    clock.advance(3s);  // a stalled past its lease
    REQUIRE(b.hold());
    b.pass();
    CHECK(step_b.announced() == 1);
    log.commit(log.begin(), 1);
    CHECK_FALSE(a.pass());  // its step finds the lease gone: it announces nothing
    CHECK(step_a.announced() == 1);
    CHECK_FALSE(a.lease());
    b.pass();
    CHECK(step_b.announced() == 2);
    CHECK(log.notifications == 3);
}

TEST_CASE("herald: after a failed beat it announces at the next, whatever it saw before", "[herald]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    fakes::FakeLogAnnouncer log(store);
    FlakyAnnouncer flaky(log);
    maintenance::AnnounceStep step(flaky);
    ElectedRole herald("herald", store, {&step}, "h", kTimings);
    REQUIRE(herald.hold());
    herald.pass();
    flaky.down = true;
    herald.pass();  // logged; the lease is kept
    CHECK(herald.lease());
    flaky.down = false;
    herald.pass();
    CHECK(log.notifications == 2);
}

TEST_CASE("herald: a quiet log is asked every fourth beat at most, and news brings every beat back", "[herald]") {
    using maintenance::AnnounceStep;
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    fakes::FakeLogAnnouncer log(store);
    AnnounceStep step(log);
    ElectedRole herald("herald", store, {&step}, "h", kTimings);
    REQUIRE(herald.hold());
    const auto beats = [&](int n) {
        const int before = log.calls;
        for (int i = 0; i < n; ++i) herald.pass();
        return log.calls - before;
    };
    CHECK(beats(AnnounceStep::kQuietBeats) == AnnounceStep::kQuietBeats);  // every beat at first
    CHECK(beats(AnnounceStep::kQuietBeats) == AnnounceStep::kQuietBeats / 2);
    CHECK(beats(AnnounceStep::kQuietBeats) == AnnounceStep::kQuietBeats / AnnounceStep::kMaxStride);
    CHECK(beats(4 * AnnounceStep::kQuietBeats) == AnnounceStep::kQuietBeats);  // never sparser

    // An event: announced within kMaxStride beats, and every beat again after.
    log.commit(log.begin(), 1);
    const int notified = log.notifications;
    int waited = 0;
    while (log.notifications == notified && waited < 10) {
        herald.pass();
        ++waited;
    }
    CHECK(log.notifications == notified + 1);
    CHECK(waited <= AnnounceStep::kMaxStride);
    CHECK(beats(10) == 10);
}

TEST_CASE("herald: on several nodes (Citus' workers), it announces what became readable on any, and nothing held back",
          "[herald]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    fakes::FakeLogAnnouncer log(store, 2);
    maintenance::AnnounceStep step(log);
    ElectedRole herald("herald", store, {&step}, "h", kTimings);
    REQUIRE(herald.hold());
    herald.pass();
    CHECK(log.notifications == 1);
    for (int node : {0, 1}) {
        log.commit(log.begin(node), 1, node);
        herald.pass();
        CHECK(log.notifications == 2 + node);
    }
    // Each node's numbers are its own: node 1 far ahead of node 0 hides nothing of node 0.
    for (int i = 0; i < 50; ++i) log.commit(log.begin(1), 0, 1);
    herald.pass();
    CHECK(log.notifications == 3);
    const auto slow = log.begin(0);
    log.commit(log.begin(0), 1, 0);  // behind node 0's open transaction: not readable yet
    log.commit(log.begin(1), 0, 1);
    herald.pass();
    CHECK(log.notifications == 3);
    log.commit(slow, 0, 0);
    herald.pass();
    CHECK(log.notifications == 4);
}

TEST_CASE("log announcer (fake): positions of another count of nodes are unknown, and announce", "[herald]") {
    fakes::FakeClock clock;
    fakes::FakeLeaseStore store(clock);
    fakes::FakeLogAnnouncer log(store, 2);
    const auto token = store.acquire("h", std::chrono::seconds(30));
    REQUIRE(token);
    const maintenance::MaintainerLease held{"h", *token};
    const auto first = log.announce(held, {});
    CHECK(first.announced);
    CHECK(first.watermarks.size() == 2);
    CHECK_FALSE(log.announce(held, first.watermarks).announced);
    CHECK(log.announce(held, {first.watermarks[0]}).announced);  // a node added since
}
