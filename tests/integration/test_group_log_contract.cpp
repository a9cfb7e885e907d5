// One contract for the GroupLog port, run against the fake the unit tests
// use and against PostgresGroupLog on a real cluster, so the fake cannot
// drift from what the consumer meets in production.

#include <catch2/catch.hpp>

#include <memory>
#include <thread>

#include "core/group_log.h"
#include "postgres/postgres_group_log.h"
#include "support/consume_rig.h"
#include "support/fake_group_log.h"
#include "support/tributary_cli.h"

using namespace tributary;
using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

/// What the contract needs of an implementation.
class Subject {
public:
    virtual ~Subject() = default;
    virtual GroupLog& log() = 0;
    virtual std::unique_ptr<GroupLog> log_of_missing_group() = 0;
    /// Adds `n` events of a source read after-id to the group's log, committed.
    virtual void produce(int n) = 0;
    /// Adds an event per key of a source keyed by text, committed.
    virtual void produce_keyed(const std::vector<std::string>& keys) = 0;
};

class FakeSubject : public Subject {
public:
    GroupLog& log() override { return log_; }
    std::unique_ptr<GroupLog> log_of_missing_group() override {
        missing_.group_missing = true;
        return std::make_unique<fakes::FakeGroupLog>(missing_);
    }
    void produce(int n) override { state_.produce(n); }
    void produce_keyed(const std::vector<std::string>& keys) override { state_.produce_keyed(keys); }

private:
    fakes::FakeGroupState state_, missing_;
    fakes::FakeGroupLog log_{state_};
};

class PostgresSubject : public Subject {
public:
    PostgresSubject() {
        rig_.add_sources({"c.one"});
        rig_.add_keyed_source("c.keyed");
        run_tributary(rig_.url(), {"group", "create", "g", "--from", "beginning"});
        log_ = postgres::open_group_log(rig_.url(), "g");
    }
    GroupLog& log() override { return *log_; }
    std::unique_ptr<GroupLog> log_of_missing_group() override { return postgres::open_group_log(rig_.url(), "nope"); }
    void produce(int n) override { rig_.add_events("c.one", n); }
    void produce_keyed(const std::vector<std::string>& keys) override { rig_.add_keyed_events("c.keyed", keys); }

private:
    ConsumeRig rig_;
    std::unique_ptr<GroupLog> log_;
};

/// A read that may have to wait a moment for the cluster-wide watermark
/// (any open transaction on the cluster holds it) or for a retry's backoff.
std::optional<LeasedBatch> read_soon(GroupLog& log, int max, std::chrono::milliseconds patience = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    for (;;) {
        auto batch = log.read("contract", max);
        if (batch || std::chrono::steady_clock::now() > deadline) return batch;
        std::this_thread::sleep_for(20ms);
    }
}

constexpr const char* kForeignToken = "00000000-0000-0000-0000-000000000000";

void check_contract(Subject& subject) {
    GroupLog& log = subject.log();
    SECTION("an empty log has nothing to read") { CHECK_FALSE(log.read("contract", 10).has_value()); }

    SECTION("a read leases the next events in order, once") {
        subject.produce(5);
        const auto first = read_soon(log, 3);
        REQUIRE(first);
        CHECK(first->delivery == 1);
        CHECK_FALSE(first->token.empty());
        REQUIRE(first->events.size() == 3);
        CHECK(first->events[0].seq < first->events[1].seq);
        CHECK(first->events[1].seq < first->events[2].seq);
        CHECK(first->events[0].payload.find("\"n\"") != std::string::npos);
        const auto second = read_soon(log, 10);
        REQUIRE(second);
        CHECK(second->id != first->id);
        CHECK(second->events.size() == 2);
        CHECK(second->events.front().seq > first->events.back().seq);
        CHECK_FALSE(log.read("contract", 10).has_value());
    }

    SECTION("every event carries its key as text; only an after-id source's has an event_id") {
        subject.produce(1);
        const std::string composite = R"(["42","2024-05-01T10:00:00Z"])";
        subject.produce_keyed({"evt_1", composite});
        std::vector<LoggedEvent> events;
        while (events.size() < 3) {
            const auto batch = read_soon(log, 10);
            REQUIRE(batch);
            events.insert(events.end(), batch->events.begin(), batch->events.end());
            CHECK(log.ack(*batch));
        }
        REQUIRE(events.size() == 3);
        REQUIRE(events[0].event_id.has_value());
        CHECK(events[0].event_key == std::to_string(*events[0].event_id));
        CHECK_FALSE(events[1].event_id.has_value());
        CHECK(events[1].event_key == "evt_1");
        CHECK(events[1].payload.find("evt_1") != std::string::npos);
        CHECK_FALSE(events[2].event_id.has_value());
        CHECK(events[2].event_key == composite);
    }

    SECTION("ack, extend and fail take the lease token; a second settlement is refused") {
        subject.produce(2);
        const auto batch = read_soon(log, 10);
        REQUIRE(batch);
        CHECK(log.extend(batch->id, batch->token));
        CHECK_FALSE(log.extend(batch->id, kForeignToken));
        LeasedBatch impostor = *batch;
        impostor.token = kForeignToken;
        CHECK_FALSE(log.ack(impostor));
        CHECK_FALSE(log.fail(impostor, "not mine"));
        CHECK(log.ack(*batch));
        CHECK_FALSE(log.ack(*batch));
        CHECK_FALSE(log.fail(*batch, "too late"));
        CHECK_FALSE(log.extend(batch->id, batch->token));
    }

    SECTION("the events of a failed batch come back one by one, as a later delivery") {
        subject.produce(2);
        const auto batch = read_soon(log, 10);
        REQUIRE(batch);
        REQUIRE(batch->events.size() == 2);
        CHECK(log.fail(*batch, "boom"));
        std::vector<std::int64_t> back;
        for (int i = 0; i < 2; ++i) {
            const auto retry = read_soon(log, 10);  // after a backoff of up to 1 s
            REQUIRE(retry);
            CHECK(retry->events.size() == 1);
            CHECK(retry->delivery == 2);
            back.push_back(retry->events[0].seq);
            CHECK(log.ack(*retry));
        }
        std::sort(back.begin(), back.end());
        CHECK(back == std::vector<std::int64_t>{batch->events[0].seq, batch->events[1].seq});
    }

    SECTION("any bytes a command wrote to stderr can be the error of a failure") {
        subject.produce(1);
        const auto batch = read_soon(log, 10);
        REQUIRE(batch);
        const std::string error("exit 1: \0 \xff\xfe not UTF-8\n" + std::string(100000, 'x'), 10032);
        CHECK(log.fail(*batch, error));
    }

    SECTION("a read of a group that does not exist throws GroupNotFound") {
        const auto missing = subject.log_of_missing_group();
        CHECK_THROWS_AS(missing->read("contract", 10), GroupNotFound);
    }
}

}  // namespace

TEST_CASE("GroupLog contract: the fake", "[consume][contract]") {
    FakeSubject subject;
    check_contract(subject);
}

TEST_CASE("GroupLog contract: PostgresGroupLog", "[consume][contract]") {
    PostgresSubject subject;
    check_contract(subject);
}
