// One contract for the GroupLog port, run against the fake the unit tests
// use and against PostgresGroupLog on a real cluster, so the fake cannot
// drift from what the consumer meets in production.

#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <thread>

#include <pqxx/pqxx>

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
    /// Adds an event with this payload (JSON as PostgreSQL's jsonb prints
    /// it), committed.
    virtual void produce_payload(const std::string& payload) = 0;
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
    void produce_payload(const std::string& payload) override {
        std::lock_guard<std::mutex> guard(state_.mutex);
        const auto seq = ++state_.last_seq;
        state_.fresh.push_back(LoggedEvent{seq, "stripe.events", std::nullopt, "p" + std::to_string(seq), payload});
    }

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
    void produce_payload(const std::string& payload) override {
        pqxx::connection c(rig_.url());
        pqxx::work tx(c);
        // The test's premise: the payload is written as jsonb prints it.
        REQUIRE(tx.exec_params("SELECT $1::jsonb::text", payload)[0][0].as<std::string>() == payload);
        tx.exec_params(
            "INSERT INTO tributary.events (source_id, event_key, payload) "
            "SELECT s.id, 'p' || (SELECT count(*) FROM tributary.events), $1::jsonb "
            "  FROM tributary.sources s WHERE s.name = 'c.keyed'",
            payload);
        tx.commit();
    }

private:
    ConsumeRig rig_;
    std::unique_ptr<GroupLog> log_;
};

/// The two ways to lease a batch: `read`, and `next` without a previous
/// batch. Both must hand out the same batches.
enum class Form { read, next };

std::optional<LeasedBatch> lease(GroupLog& log, Form form, int max) {
    if (form == Form::read) return log.read("contract", max);
    auto next = log.next("contract", max, nullptr);
    CHECK_FALSE(next.previous_acked.has_value());
    return std::move(next.batch);
}

/// A read that may have to wait a moment for the cluster-wide watermark
/// (any open transaction on the cluster holds it) or for a retry's backoff.
std::optional<LeasedBatch> read_soon(GroupLog& log, int max, Form form = Form::read,
                                     std::chrono::milliseconds patience = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    for (;;) {
        auto batch = lease(log, form, max);
        if (batch || std::chrono::steady_clock::now() > deadline) return batch;
        std::this_thread::sleep_for(20ms);
    }
}

/// `next` with a previous batch, waiting as read_soon does for a batch;
/// the previous batch is named only on the first call.
NextBatch next_soon(GroupLog& log, int max, const LeasedBatch& previous) {
    NextBatch out = log.next("contract", max, &previous);
    if (!out.batch) out.batch = read_soon(log, max, Form::next, 5s);
    return out;
}

constexpr const char* kForeignToken = "00000000-0000-0000-0000-000000000000";

void check_contract(Subject& subject, Form form) {
    GroupLog& log = subject.log();
    SECTION("an empty log has nothing to read") { CHECK_FALSE(lease(log, form, 10).has_value()); }

    SECTION("a consumer leaving a group of one lane gives back nothing, and may read again") {
        subject.produce(2);
        const auto batch = read_soon(log, 1, form);
        REQUIRE(batch);
        CHECK(log.leave("contract") == 0);
        CHECK(log.ack(*batch));  // its batch stayed its own
        CHECK(read_soon(log, 10, form).has_value());
        CHECK_THROWS_AS(subject.log_of_missing_group()->leave("contract"), GroupNotFound);
    }

    SECTION("a consumer of a group of one lane has no lanes coming to it") {
        CHECK_FALSE(lease(log, form, 10).has_value());
        CHECK_FALSE(log.awaits_lanes("contract"));
        CHECK_THROWS_AS(subject.log_of_missing_group()->awaits_lanes("contract"), GroupNotFound);
    }

    SECTION("a read leases the next events in order, once") {
        subject.produce(5);
        const auto first = read_soon(log, 3, form);
        REQUIRE(first);
        CHECK(first->delivery == 1);
        CHECK_FALSE(first->token.empty());
        REQUIRE(first->events.size() == 3);
        CHECK(first->events[0].seq < first->events[1].seq);
        CHECK(first->events[1].seq < first->events[2].seq);
        CHECK(first->events[0].payload.find("\"n\"") != std::string::npos);
        const auto second = read_soon(log, 10, form);
        REQUIRE(second);
        CHECK(second->id != first->id);
        CHECK(second->events.size() == 2);
        CHECK(second->events.front().seq > first->events.back().seq);
        CHECK_FALSE(lease(log, form, 10).has_value());
    }

    SECTION("every event carries its key as text; only an after-id source's has an event_id") {
        subject.produce(1);
        const std::string composite = R"(["42","2024-05-01T10:00:00Z"])";
        subject.produce_keyed({"evt_1", composite});
        std::vector<LoggedEvent> events;
        while (events.size() < 3) {
            const auto batch = read_soon(log, 10, form);
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

    SECTION("keys and payloads come as stored: escapes decoded in keys, payloads byte for byte") {
        const std::string key = "a\"b\\c \xc3\xa9\t\xf0\x9f\x98\x80";
        subject.produce_keyed({key});
        const std::string payload =
            R"({"n": 1.50, "big": 123456789012345678901234567890, "list": [1, {"a": null}, []], )"
            R"("text": ")"
            "\xc3\xa9"
            R"( \"q\" \\ \u0001 \n )"
            "\xf0\x9f\x98\x80"
            R"("})";
        subject.produce_payload(payload);
        subject.produce_payload("123456789012345678901234567890");
        subject.produce_payload(R"("just text")");
        std::vector<LoggedEvent> events;
        while (events.size() < 4) {
            const auto batch = read_soon(log, 10, form);
            REQUIRE(batch);
            events.insert(events.end(), batch->events.begin(), batch->events.end());
            CHECK(log.ack(*batch));
        }
        REQUIRE(events.size() == 4);
        CHECK(events[0].event_key == key);
        CHECK(events[0].source == events[1].source);
        CHECK(events[1].payload == payload);
        CHECK(events[2].payload == "123456789012345678901234567890");
        CHECK(events[3].payload == R"("just text")");
    }

    SECTION("ack, extend and fail take the lease token; a second settlement is refused") {
        subject.produce(2);
        const auto batch = read_soon(log, 10, form);
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
        const auto batch = read_soon(log, 10, form);
        REQUIRE(batch);
        REQUIRE(batch->events.size() == 2);
        CHECK(log.fail(*batch, "boom"));
        std::vector<std::int64_t> back;
        for (int i = 0; i < 2; ++i) {
            const auto retry = read_soon(log, 10, form);  // after a backoff of up to 1 s
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
        const auto batch = read_soon(log, 10, form);
        REQUIRE(batch);
        const std::string error("exit 1: \0 \xff\xfe not UTF-8\n" + std::string(100000, 'x'), 10032);
        CHECK(log.fail(*batch, error));
    }

    SECTION("a read of a group that does not exist throws GroupNotFound") {
        const auto missing = subject.log_of_missing_group();
        CHECK_THROWS_AS(missing->read("contract", 10), GroupNotFound);
        CHECK_THROWS_AS(missing->next("contract", 10, nullptr), GroupNotFound);
    }
}

/// What `next` does with the previous batch it is given.
void check_next_contract(Subject& subject) {
    GroupLog& log = subject.log();

    SECTION("next acks the previous batch and leases the following one in one call") {
        subject.produce(5);
        const auto first = read_soon(log, 3, Form::next);
        REQUIRE(first);
        REQUIRE(first->events.size() == 3);
        const auto second = log.next("contract", 10, &*first);
        CHECK(second.previous_acked == std::optional<bool>(true));
        REQUIRE(second.batch);
        CHECK(second.batch->id != first->id);
        CHECK(second.batch->delivery == 1);
        REQUIRE(second.batch->events.size() == 2);
        CHECK(second.batch->events.front().seq > first->events.back().seq);
        CHECK_FALSE(log.ack(*first));  // settled already
        const auto third = log.next("contract", 10, &*second.batch);
        CHECK(third.previous_acked == std::optional<bool>(true));  // acked even with nothing more to lease
        CHECK_FALSE(third.batch.has_value());
        CHECK_FALSE(log.extend(second.batch->id, second.batch->token));
    }

    SECTION("a retried next finds its previous batch acked already: false, nothing changed") {
        subject.produce(2);
        const auto first = read_soon(log, 1, Form::next);
        REQUIRE(first);
        const auto acked = log.next("contract", 1, &*first);
        CHECK(acked.previous_acked == std::optional<bool>(true));
        REQUIRE(acked.batch);
        const auto again = log.next("contract", 1, &*first);
        CHECK(again.previous_acked == std::optional<bool>(false));
        CHECK_FALSE(again.batch.has_value());  // the batch leased meanwhile stays leased
        CHECK(log.ack(*acked.batch));
    }

    SECTION("next refuses the ack of a batch it does not hold, and leases anyway") {
        subject.produce(4);
        const auto first = read_soon(log, 3, Form::next);
        REQUIRE(first);
        LeasedBatch impostor = *first;
        impostor.token = kForeignToken;
        const auto next = next_soon(log, 10, impostor);
        CHECK(next.previous_acked == std::optional<bool>(false));
        REQUIRE(next.batch);
        CHECK(next.batch->events.size() == 1);
        CHECK(log.ack(*first));  // still its holder's
        CHECK(log.ack(*next.batch));
    }

    SECTION("a next after a failed batch carries no ack; the failed events come back singly") {
        subject.produce(2);
        const auto batch = read_soon(log, 10, Form::next);
        REQUIRE(batch);
        CHECK(log.fail(*batch, "boom"));
        const auto retry = read_soon(log, 10, Form::next);  // after a backoff of up to 1 s
        REQUIRE(retry);
        CHECK(retry->delivery == 2);
        CHECK(retry->events.size() == 1);
        const auto second = next_soon(log, 10, *retry);
        CHECK(second.previous_acked == std::optional<bool>(true));
        REQUIRE(second.batch);
        CHECK(second.batch->delivery == 2);
        CHECK(second.batch->events.size() == 1);
    }
}

}  // namespace

TEST_CASE("GroupLog contract: the fake", "[consume][contract]") {
    FakeSubject subject;
    check_contract(subject, Form::read);
}

TEST_CASE("GroupLog contract: the fake, leasing with next", "[consume][contract]") {
    FakeSubject subject;
    check_contract(subject, Form::next);
}

TEST_CASE("GroupLog contract: the fake's next", "[consume][contract]") {
    FakeSubject subject;
    check_next_contract(subject);
}

TEST_CASE("GroupLog contract: PostgresGroupLog", "[consume][contract]") {
    PostgresSubject subject;
    check_contract(subject, Form::read);
}

TEST_CASE("GroupLog contract: PostgresGroupLog, leasing with next", "[consume][contract]") {
    PostgresSubject subject;
    check_contract(subject, Form::next);
}

TEST_CASE("GroupLog contract: PostgresGroupLog's next", "[consume][contract]") {
    PostgresSubject subject;
    check_next_contract(subject);
}
