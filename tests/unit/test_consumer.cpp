// The consumer loop against fakes of its ports, on real threads and the real
// steady clock with short leases and pauses.

#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include "core/consumer.h"
#include "support/fake_group_log.h"

using namespace tributary;
using namespace tributary::fakes;
using namespace std::chrono_literals;

namespace {

struct Rig {
    FakeGroupState state;
    RecordingWakeup wakeup;
    StopSignal stop;
    ConsumerOptions options;

    Rig() {
        options.group = "g";
        options.consumer = "test:1";
        options.batch_size = 7;
        options.concurrency = 3;
        options.lease = 1000ms;
        options.shutdown_timeout = 2000ms;
        options.until_idle = true;
        options.outage_min = 1ms;
        options.outage_max = 5ms;
    }

    /// Runs a consumer to its end; returns its totals and whether it ended well.
    std::pair<ConsumerTotals, bool> run(BatchHandler& handler) {
        Consumer consumer({[this] { return std::make_unique<FakeGroupLog>(state); }, handler, wakeup}, options, stop);
        const bool ok = consumer.run();
        return {consumer.totals(), ok};
    }
};

std::vector<std::int64_t> sorted(std::vector<std::int64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
}

std::vector<std::int64_t> one_to(std::int64_t n) {
    std::vector<std::int64_t> v;
    for (std::int64_t i = 1; i <= n; ++i) v.push_back(i);
    return v;
}

}  // namespace

TEST_CASE("consumer: every event is handled and acked exactly once when nothing goes wrong") {
    Rig rig;
    rig.state.produce(50);
    FakeBatchHandler handler;
    const auto [totals, ok] = rig.run(handler);
    CHECK(ok);
    CHECK(sorted(rig.state.acked()) == one_to(50));
    CHECK(totals.events_acked == 50);
    CHECK(totals.batches_acked == 8);  // 7 batches of 7, one of 1
    CHECK(totals.batches_failed + totals.batches_lost + totals.batches_abandoned + totals.batches_unsettled == 0);
    CHECK(rig.state.in_flight() == 0);
}

TEST_CASE("consumer: --until-idle reads again while lanes are coming to it, and stops when none are") {
    Rig rig;
    rig.options.concurrency = 1;
    rig.state.lanes_coming = 2;  // the other consumers give back lanes at their next reads
    FakeBatchHandler handler;
    const auto [totals, ok] = rig.run(handler);
    CHECK(ok);
    CHECK(rig.state.awaits_lanes_calls == 3);
    CHECK(rig.state.nexts == 3);
}

TEST_CASE("consumer: handlers get the events of their batch in order, with the delivery count") {
    Rig rig;
    rig.state.produce(10);
    rig.options.concurrency = 1;
    rig.options.batch_size = 4;
    std::mutex mutex;
    std::vector<std::int64_t> seen;
    FakeBatchHandler handler([&](const LeasedBatch& batch, const StopSignal&) {
        std::lock_guard<std::mutex> guard(mutex);
        CHECK(batch.delivery == 1);
        CHECK(batch.events.size() <= 4);
        for (const auto& e : batch.events) seen.push_back(e.seq);
        return HandlerResult::success();
    });
    rig.run(handler);
    CHECK(seen == one_to(10));
}

TEST_CASE("consumer: at most `concurrency` batches are in hand (backpressure)") {
    Rig rig;
    rig.state.produce(100);
    rig.options.batch_size = 2;
    rig.options.concurrency = 3;
    FakeBatchHandler handler([](const LeasedBatch&, const StopSignal&) {
        std::this_thread::sleep_for(5ms);
        return HandlerResult::success();
    });
    rig.run(handler);
    CHECK(handler.most_in_hand == 3);
    CHECK(sorted(rig.state.acked()) == one_to(100));
}

TEST_CASE("consumer: the heartbeat keeps a batch's lease while its handler runs past it") {
    Rig rig;
    rig.state.produce(3);
    rig.state.lease = 150ms;
    rig.options.lease = 150ms;
    rig.options.concurrency = 2;  // the second worker would take over an expired batch
    FakeBatchHandler handler([](const LeasedBatch&, const StopSignal&) {
        std::this_thread::sleep_for(600ms);
        return HandlerResult::success();
    });
    const auto [totals, ok] = rig.run(handler);
    CHECK(rig.state.extends >= 6);  // every 50 ms for 600 ms
    CHECK(rig.state.expired_acks == 0);
    CHECK(totals.batches_lost == 0);
    CHECK(handler.calls == 1);  // never delivered twice
    CHECK(sorted(rig.state.acked()) == one_to(3));
}

TEST_CASE("consumer: a stop ends reading; the batch in hand finishes and is acked") {
    Rig rig;
    rig.state.produce(20);
    rig.options.concurrency = 1;
    rig.options.until_idle = false;
    Latch started, finish;
    FakeBatchHandler handler([&](const LeasedBatch&, const StopSignal&) {
        started.open();
        finish.wait();
        return HandlerResult::success();
    });
    std::thread stopper([&] {
        REQUIRE(started.wait());
        rig.stop.request_stop();
        std::this_thread::sleep_for(50ms);  // the handler is still running
        finish.open();
    });
    const auto [totals, ok] = rig.run(handler);
    stopper.join();
    CHECK(ok);
    CHECK(handler.calls == 1);
    CHECK(totals.batches_acked == 1);
    CHECK(rig.state.acked() == one_to(7));
    CHECK(rig.state.nexts == 1);
    CHECK(rig.state.acks == 1);           // no more reads to carry it: acked on its own
    CHECK(rig.state.fresh.size() == 13);  // never read, never lost
}

TEST_CASE("consumer: at the shutdown timeout the batches still in hand are abandoned, not acked") {
    Rig rig;
    rig.state.produce(5);
    rig.options.concurrency = 1;
    rig.options.until_idle = false;
    rig.options.shutdown_timeout = 100ms;
    Latch started;
    FakeBatchHandler handler([&](const LeasedBatch&, const StopSignal& abandon) {
        started.open();
        while (!abandon.wait_for(1s)) {
        }
        return HandlerResult::abandoned();
    });
    std::thread stopper([&] {
        REQUIRE(started.wait());
        rig.stop.request_stop();
    });
    const auto [totals, ok] = rig.run(handler);  // returns only once the handler gave up its batch
    stopper.join();
    CHECK(ok);
    CHECK(totals.batches_abandoned == 1);
    CHECK(totals.batches_acked == 0);
    CHECK(rig.state.acked().empty());
    CHECK(rig.state.in_flight() == 1);  // left to its lease: it comes back
    CHECK(rig.state.fails == 0);
}

TEST_CASE("consumer: a database outage on reads is waited out") {
    Rig rig;
    rig.state.produce(30);
    rig.state.failing_nexts = 5;
    FakeBatchHandler handler;
    const auto [totals, ok] = rig.run(handler);
    CHECK(ok);
    CHECK(sorted(rig.state.acked()) == one_to(30));
}

TEST_CASE("consumer: an ack that fails on the database is retried, never dropped") {
    Rig rig;
    rig.state.produce(14);
    rig.options.concurrency = 1;
    rig.state.failing_acks = 3;
    FakeBatchHandler handler;
    const auto [totals, ok] = rig.run(handler);
    CHECK(sorted(rig.state.acked()) == one_to(14));
    CHECK(totals.batches_acked == 2);
    CHECK(totals.batches_unsettled == 0);
    CHECK(rig.state.nexts_with_ack == 5);  // 3 failed, then each batch's ack on the next read
    CHECK(rig.state.acks == 0);
}

TEST_CASE("consumer: in the steady state each batch's ack rides on the read of the next, one call per batch") {
    Rig rig;
    rig.state.produce(50);
    rig.options.concurrency = 1;
    FakeBatchHandler handler;
    const auto [totals, ok] = rig.run(handler);
    CHECK(ok);
    CHECK(sorted(rig.state.acked()) == one_to(50));
    CHECK(totals.batches_acked == 8);
    CHECK(rig.state.nexts == 9);  // 8 batches, then the empty read that acks the last
    CHECK(rig.state.nexts_with_ack == 8);
    CHECK(rig.state.reads + rig.state.acks == 0);
}

TEST_CASE("consumer: an ack whose reply was lost is retried; refused within the lease, it counts as acked") {
    Rig rig;
    rig.state.produce(14);
    rig.options.concurrency = 1;
    rig.state.lost_ack_replies = 1;  // batch 1's ack commits (and leases batch 2), the reply is lost
    FakeBatchHandler handler;
    const auto [totals, ok] = rig.run(handler);
    CHECK(ok);
    CHECK(handler.calls == 1);
    CHECK(rig.state.nexts_with_ack == 2);   // the lost try, then its retry, refused
    CHECK(rig.state.acked() == one_to(7));  // acked once
    CHECK(totals.batches_acked == 1);
    CHECK(totals.batches_lost == 0);
    CHECK(rig.state.in_flight() == 1);  // batch 2, leased by the lost try: back after its lease
}

TEST_CASE("consumer: a pending ack that cannot reach the database before its lease ends is left unsettled") {
    Rig rig;
    rig.state.produce(3);
    rig.state.lease = 100ms;
    rig.options.lease = 100ms;
    rig.options.concurrency = 1;
    rig.options.until_idle = false;
    rig.state.failing_extends = true;  // the lease runs out
    rig.state.failing_acks = 1000000;  // and the ack never gets through
    FakeBatchHandler handler([&](const LeasedBatch& batch, const StopSignal&) {
        if (batch.delivery == 2) {  // taken over once the first delivery's ack was given up
            std::lock_guard<std::mutex> guard(rig.state.mutex);
            rig.state.failing_acks = 0;
            rig.stop.request_stop();
        }
        return HandlerResult::success();
    });
    const auto [totals, ok] = rig.run(handler);
    CHECK(ok);
    CHECK(totals.batches_unsettled == 1);
    CHECK(totals.batches_acked == 1);  // delivery 2, acked on its own at the stop
    CHECK(rig.state.acks == 1);
    CHECK(rig.state.acked() == one_to(3));
}

TEST_CASE("consumer: the heartbeat keeps the lease of a batch whose ack waits out an outage") {
    Rig rig;
    rig.state.produce(3);
    rig.state.lease = 150ms;
    rig.options.lease = 150ms;
    rig.options.concurrency = 1;
    rig.options.outage_min = 40ms;
    rig.options.outage_max = 40ms;
    rig.state.failing_acks = 10;  // about 200 ms of retries, past the first lease
    FakeBatchHandler handler;
    const auto [totals, ok] = rig.run(handler);
    CHECK(ok);
    CHECK(rig.state.extends >= 2);
    CHECK(rig.state.expired_acks == 0);
    CHECK(totals.batches_acked == 1);
    CHECK(totals.batches_unsettled == 0);
    CHECK(rig.state.acked() == one_to(3));
}

TEST_CASE("consumer: an ack refused because the lease went to another consumer counts as lost") {
    Rig rig;
    rig.state.produce(7);
    rig.options.concurrency = 1;
    FakeBatchHandler handler([&](const LeasedBatch& batch, const StopSignal&) {
        if (batch.delivery == 1) rig.state.steal(batch.id);  // taken over while we worked
        return HandlerResult::success();
    });
    const auto [totals, ok] = rig.run(handler);
    CHECK(totals.batches_lost == 1);
    CHECK(totals.batches_acked == 0);
    CHECK(rig.state.acked().empty());  // the late ack changed nothing
    CHECK(rig.state.in_flight() == 1);
}

TEST_CASE("consumer: a failed batch is failed with the handler's error, and its events come back") {
    Rig rig;
    rig.state.produce(7);
    rig.options.concurrency = 1;
    FakeBatchHandler handler([](const LeasedBatch& batch, const StopSignal&) {
        if (batch.events.size() > 1) return HandlerResult::failure("boom\nat line 3\n");
        return HandlerResult::success();
    });
    const auto [totals, ok] = rig.run(handler);
    CHECK(totals.batches_failed == 1);
    REQUIRE(rig.state.errors.size() == 1);
    CHECK(rig.state.errors[0] == "boom\nat line 3\n");
    CHECK(sorted(rig.state.acked()) == one_to(7));  // retried singly
    CHECK(totals.batches_acked == 7);
    CHECK(rig.state.fails == 1);
    CHECK(rig.state.nexts_with_ack == 7);  // the read after the failure carried no ack
    CHECK(rig.state.nexts == 9);
}

TEST_CASE("consumer: a handler that throws fails its batch instead of the process") {
    Rig rig;
    rig.state.produce(3);
    rig.options.concurrency = 1;
    FakeBatchHandler handler([](const LeasedBatch& batch, const StopSignal&) -> HandlerResult {
        if (batch.delivery == 1) throw std::runtime_error("bug");
        return HandlerResult::success();
    });
    const auto [totals, ok] = rig.run(handler);
    CHECK(ok);
    REQUIRE(!rig.state.errors.empty());
    CHECK(rig.state.errors[0] == "handler error: bug");
    CHECK(sorted(rig.state.acked()) == one_to(3));
}

TEST_CASE("consumer: empty reads wait longer each time, up to the cap, until a stop") {
    Rig rig;
    rig.options.concurrency = 1;
    rig.options.until_idle = false;
    rig.wakeup.on_wait = [&](std::size_t waits) {
        if (waits == 7) rig.stop.request_stop();
    };
    FakeBatchHandler handler;
    const auto [totals, ok] = rig.run(handler);
    CHECK(ok);
    CHECK(rig.wakeup.waits() ==
          std::vector<std::chrono::milliseconds>{50ms, 100ms, 200ms, 400ms, 800ms, 1000ms, 1000ms});
}

TEST_CASE("consumer: work found resets the idle wait to its minimum") {
    Rig rig;
    rig.options.concurrency = 1;
    rig.options.until_idle = false;
    rig.wakeup.on_wait = [&](std::size_t waits) {
        if (waits == 3) rig.state.produce(2);
        if (waits == 4) rig.stop.request_stop();
    };
    FakeBatchHandler handler;
    rig.run(handler);
    CHECK(rig.wakeup.waits() == std::vector<std::chrono::milliseconds>{50ms, 100ms, 200ms, 50ms});
    CHECK(rig.state.acked() == one_to(2));
}

TEST_CASE("consumer: an unknown group ends it with an error") {
    Rig rig;
    rig.state.group_missing = true;
    rig.options.until_idle = false;
    FakeBatchHandler handler;
    const auto [totals, ok] = rig.run(handler);
    CHECK_FALSE(ok);
    CHECK(handler.calls == 0);
}

TEST_CASE("consumer: a batch taken over by another worker of the same process is settled once") {
    Rig rig;
    rig.state.produce(4);
    rig.state.lease = 100ms;
    rig.options.lease = 100ms;
    rig.options.concurrency = 2;
    rig.options.batch_size = 10;
    rig.options.until_idle = false;
    rig.state.failing_extends = true;  // heartbeats cannot keep the lease
    FakeBatchHandler handler([](const LeasedBatch& batch, const StopSignal&) {
        if (batch.delivery == 1) std::this_thread::sleep_for(400ms);  // past the lease
        return HandlerResult::success();
    });
    std::thread stopper([&] {
        while (handler.calls < 2 || handler.in_hand > 0) std::this_thread::sleep_for(5ms);
        rig.stop.request_stop();
    });
    const auto [totals, ok] = rig.run(handler);
    stopper.join();
    CHECK(ok);
    CHECK(totals.batches_acked == 1);  // delivery 2, by the other worker
    CHECK(totals.batches_lost == 1);   // delivery 1's late ack, refused
    CHECK(sorted(rig.state.acked()) == one_to(4));
}
