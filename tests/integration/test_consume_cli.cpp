// `tributary consume` end to end: the real binary, a real cluster, --exec
// commands that write what they were given into files, and kills, stops and
// signals at the worst moments.

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "support/consume_rig.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

/// `consume GROUP ...` in the background.
std::unique_ptr<ChildProcess> start_consumer(const ConsumeRig& rig, const std::string& group,
                                             std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    args.insert(args.begin(), {"consume", group});
    return std::make_unique<ChildProcess>(tributary_args(rig.url(), args), env);
}

bool log_says(const ChildProcess& child, const std::string& pattern) {
    return std::regex_search(child.err(), std::regex(pattern));
}

std::int64_t scalar_int(const ConsumeRig& rig, const std::string& sql) { return std::stoll(rig.db().scalar(sql)); }

/// Appends the batch to `out` only once the whole of it has been read, in one
/// write, so that concurrent commands never interleave lines.
std::string append_to(const ConsumeRig& rig, const std::string& out, const std::string& pause = "0") {
    return "t=$(mktemp); cat > \"$t\"; sleep " + pause + "; cat \"$t\" >> " + rig.path(out) + "; rm -f \"$t\"";
}

}  // namespace

TEST_CASE("consume --exec hands every matching event once, as NDJSON, with the payload as stored", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"orders.eu", "orders.us", "billing"});
    for (const auto* source : {"orders.eu", "orders.us", "billing"}) rig.add_events(source, 200);
    run_tributary(rig.url(), {"group", "create", "orders", "--pattern", "orders.*", "--from", "beginning"});
    const auto expected = rig.seqs("orders.%");
    REQUIRE(expected.size() == 400);

    auto consumer =
        start_consumer(rig, "orders", {"--batch", "30", "--concurrency", "3", "--exec", append_to(rig, "out")});
    REQUIRE(wait_until([&] { return rig.seq_counts("out").size() == expected.size(); }, 60s));
    consumer->signal(SIGTERM);
    REQUIRE(consumer->wait_for(30s) == 0);

    const auto lines = rig.lines("out");
    CHECK(lines.size() == expected.size());  // once each: no kills, no duplicates
    std::set<std::int64_t> seen;
    for (const auto& line : lines) {
        seen.insert(line.at("seq").get<std::int64_t>());
        const auto source = line.at("source").get<std::string>();
        CHECK((source == "orders.eu" || source == "orders.us"));
        CHECK(line.at("payload").at("source") == source);
        CHECK(line.at("payload").at("n") == line.at("event_id"));
        CHECK(line.at("event_key") == std::to_string(line.at("event_id").get<std::int64_t>()));
        CHECK(line.at("delivery") == 1);
    }
    CHECK(std::vector<std::int64_t>(seen.begin(), seen.end()) == expected);
    // Every digit of a big number reaches the command (no re-serialisation).
    CHECK(rig.read("out").find("\"big\": 123456789012345678901234567890") != std::string::npos);

    const auto status = rig.group("orders");
    CHECK(status["events_behind"] == 0);
    CHECK(status["batches_in_flight"] == 0);
    CHECK(status["retries_waiting"] == 0);
    CHECK(status["dead_letters"] == 0);
    CHECK(log_says(*consumer, "group=orders consumer=\\S+ stopped: \\d+ batches acked \\(400 events\\)"));
}

TEST_CASE("consume: kill -9 of consumers mid-batch loses nothing; duplicates come only from the kills", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"a.one", "a.two"});
    rig.add_events("a.one", 300);
    rig.add_events("a.two", 300);
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning", "--lease", "2s"});
    const auto expected = rig.seqs();
    constexpr int kBatch = 10, kConcurrency = 2;
    const std::vector<std::string> args = {"--batch",       std::to_string(kBatch),
                                           "--concurrency", std::to_string(kConcurrency),
                                           "--exec",        append_to(rig, "out", "0.15")};

    std::vector<std::unique_ptr<ChildProcess>> consumers;
    for (int i = 0; i < 2; ++i) consumers.push_back(start_consumer(rig, "g", args));
    std::mt19937 random(Catch::rngSeed());
    int kills = 0;
    for (int round = 0; round < 6; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(400 + random() % 400));
        auto& victim = consumers[random() % consumers.size()];
        victim->signal(SIGKILL);
        victim->wait_for(10s);
        ++kills;
        victim = start_consumer(rig, "g", args);
    }
    // The batches the killed consumers held come back after their 2 s lease.
    REQUIRE(wait_until([&] { return rig.seq_counts("out").size() == expected.size(); }, 90s));
    REQUIRE(wait_until([&] { return rig.group("g")["batches_in_flight"] == 0; }, 30s));
    for (auto& c : consumers) {
        c->signal(SIGTERM);
        CHECK(c->wait_for(30s) == 0);
    }

    // Nothing skipped: every event was processed, and processed successfully.
    const auto counts = rig.seq_counts("out");
    std::vector<std::int64_t> seen;
    for (const auto& [seq, n] : counts) seen.push_back(seq);
    CHECK(seen == expected);
    // Duplicates: at most what the killed consumers held (their commands,
    // in process groups of their own, may finish after the kill), and each
    // later copy is a later delivery.
    std::size_t duplicated = 0;
    std::map<std::int64_t, std::set<int>> deliveries;
    for (const auto& line : rig.lines("out")) {
        const auto seq = line.at("seq").get<std::int64_t>();
        CHECK(deliveries[seq].insert(line.at("delivery").get<int>()).second);  // never the same delivery twice
    }
    for (const auto& [seq, n] : counts) duplicated += n > 1 ? 1 : 0;
    WARN(duplicated << " events processed more than once after " << kills << " kills of consumers");
    CHECK(duplicated <= static_cast<std::size_t>(kills * kConcurrency * kBatch));
    const auto status = rig.group("g");
    CHECK(status["retries_waiting"] == 0);
    CHECK(status["dead_letters"] == 0);
    CHECK(status["events_behind"] == 0);
}

TEST_CASE("consume: a consumer stopped past its lease loses the batch; its late ack changes nothing", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"s"});
    rig.add_events("s", 10);
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning", "--lease", "1s"});
    const std::string command =
        "cat > /dev/null; sleep \"$HANDLER_SLEEP\"; echo \"$HANDLER_NAME\" >> " + rig.path("done");

    auto a = start_consumer(rig, "g", {"--consumer", "A", "--exec", command}, {"HANDLER_SLEEP=2", "HANDLER_NAME=A"});
    REQUIRE(wait_until([&] { return rig.db().scalar("SELECT consumer FROM tributary.consumer_batches") == "A"; }, 20s));
    a->signal(SIGSTOP);  // its heartbeat stops with it; its command runs on and finishes
    std::this_thread::sleep_for(1500ms);

    auto b = start_consumer(rig, "g", {"--consumer", "B", "--exec", command}, {"HANDLER_SLEEP=4", "HANDLER_NAME=B"});
    REQUIRE(wait_until([&] { return rig.db().scalar("SELECT consumer FROM tributary.consumer_batches") == "B"; }, 20s));
    CHECK(rig.db().scalar("SELECT delivery FROM tributary.consumer_batches") == "2");

    a->signal(SIGCONT);  // A's command has finished: A acks, late
    REQUIRE(wait_until([&] { return log_says(*a, "batch=\\d+ delivery=1 ack refused"); }, 20s));
    // B still holds the batch, untouched by A's ack.
    CHECK(rig.db().scalar("SELECT consumer || ' ' || delivery FROM tributary.consumer_batches") == "B 2");
    CHECK(scalar_int(rig, "SELECT count(*) FROM tributary.consumer_retries") == 0);

    REQUIRE(wait_until([&] { return rig.group("g")["batches_in_flight"] == 0; }, 20s));
    for (auto* c : {a.get(), b.get()}) {
        c->signal(SIGTERM);
        CHECK(c->wait_for(30s) == 0);
    }
    CHECK(rig.read("done") == "A\nB\n");  // A's work happened, but only B's delivery counted
    const auto status = rig.group("g");
    CHECK(status["events_behind"] == 0);
    CHECK(status["retries_waiting"] == 0);
    CHECK(status["dead_letters"] == 0);
    CHECK(log_says(*b, "stopped: 1 batches acked \\(10 events\\)"));
    CHECK(log_says(*a, "stopped: 0 batches acked \\(0 events\\), 0 failed, 1 lost"));
}

TEST_CASE("consume: a poison event goes to the dead letters after exactly max-deliveries; replay brings it back",
          "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"s"});
    rig.add_events("s", 20, {7});
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning", "--max-deliveries", "3"});
    const auto poison_seq = scalar_int(rig, "SELECT seq FROM tributary.events WHERE payload ? 'poison'");
    const std::string command = "input=$(cat); case \"$input\" in *poison*) echo x >> " + rig.path("attempts") +
                                "; echo 'poison event here' >&2; exit 1;; esac; printf '%s\\n' \"$input\" >> " +
                                rig.path("out");

    auto consumer = start_consumer(rig, "g", {"--batch", "5", "--exec", command});
    // Settled: the poison dead, and its batch's neighbours, retried one by one with backoff, done
    // (stopping at the first dead letter could cut a neighbour's retry short).
    REQUIRE(wait_until(
        [&] {
            const auto g = rig.group("g");
            return g["dead_letters"] == 1 && g["retries_waiting"] == 0 && g["batches_in_flight"] == 0 &&
                   g["events_behind"] == 0;
        },
        60s));
    consumer->signal(SIGTERM);
    REQUIRE(consumer->wait_for(30s) == 0);

    CHECK(rig.read("attempts") == "x\nx\nx\n");  // exactly max-deliveries
    const auto counts = rig.seq_counts("out");
    CHECK(counts.size() == 19);  // every other event, and not the poison
    CHECK(counts.count(poison_seq) == 0);
    for (const auto& [seq, n] : counts) CHECK(n == 1);  // neighbours were never dead-lettered nor repeated

    const auto listed = run_tributary(rig.url(), {"dlq", "list", "g"}).out;
    CHECK(listed.find(std::to_string(poison_seq)) != std::string::npos);
    const auto dead = nlohmann::json::parse(run_tributary(rig.url(), {"dlq", "list", "g", "--json"}).out);
    REQUIRE(dead.size() == 1);
    CHECK(dead[0]["seq"] == poison_seq);
    CHECK(dead[0]["event_id"] == 7);
    CHECK(dead[0]["event_key"] == "7");
    CHECK(dead[0]["deliveries"] == 3);
    CHECK(dead[0]["payload"]["poison"] == true);
    CHECK(dead[0]["last_error"].get<std::string>().find("poison event here") != std::string::npos);
    CHECK(dead[0]["last_error"].get<std::string>().find("exited with status 1") != std::string::npos);

    CHECK(run_tributary(rig.url(), {"dlq", "replay", "g", "--seq", std::to_string(poison_seq)}).out ==
          "replayed 1 dead letter of group g\n");
    auto status = rig.group("g");
    CHECK(status["dead_letters"] == 0);
    CHECK(status["retries_waiting"] == 1);
    // Fixed handler: the replayed event is processed.
    auto fixed = start_consumer(rig, "g", {"--exec", append_to(rig, "out")});
    REQUIRE(wait_until([&] { return rig.seq_counts("out").count(poison_seq) == 1; }, 30s));
    fixed->signal(SIGTERM);
    CHECK(fixed->wait_for(30s) == 0);
    status = rig.group("g");
    CHECK(status["retries_waiting"] == 0);
    CHECK(status["dead_letters"] == 0);
}

TEST_CASE("consume and dlq: an event of a source keyed by text has its key as event_key and a null event_id",
          "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"orders.eu"});
    rig.add_keyed_source("stripe.events");
    rig.add_events("orders.eu", 3);
    rig.add_keyed_events("stripe.events", {"evt_1", "evt_2", R"(["42","2024-05-01T10:00:00Z"])"}, {"evt_2"});
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning", "--max-deliveries", "1"});
    const std::string command =
        "input=$(cat); case \"$input\" in *poison*) exit 1;; esac; printf '%s\\n' \"$input\" >> " + rig.path("out");

    REQUIRE(wait_until(
        [&] {
            run_tributary(rig.url(), {"consume", "g", "--batch", "1", "--until-idle", "--exec", command});
            return rig.seq_counts("out").size() == 5 && rig.group("g")["dead_letters"] == 1;
        },
        30s));

    std::vector<std::string> keys;
    for (const auto& line : rig.lines("out")) {
        const auto key = line.at("event_key").get<std::string>();  // a JSON string for every source
        keys.push_back(key);
        if (line.at("source") == "orders.eu") {
            CHECK(line.at("payload").at("n") == line.at("event_id"));
            CHECK(key == std::to_string(line.at("event_id").get<std::int64_t>()));
        } else {
            CHECK(line.at("source") == "stripe.events");
            CHECK(line.at("event_id").is_null());
            CHECK(line.at("payload").at("key") == key);
        }
    }
    std::sort(keys.begin(), keys.end());
    CHECK(keys == std::vector<std::string>{"1", "2", "3", R"(["42","2024-05-01T10:00:00Z"])", "evt_1"});

    const auto dead = nlohmann::json::parse(run_tributary(rig.url(), {"dlq", "list", "g", "--json"}).out);
    REQUIRE(dead.size() == 1);
    CHECK(dead[0]["source"] == "stripe.events");
    CHECK(dead[0]["event_id"].is_null());
    CHECK(dead[0]["event_key"] == "evt_2");
    CHECK(dead[0]["payload"]["key"] == "evt_2");
    const auto table = run_tributary(rig.url(), {"dlq", "list", "g"}).out;
    CHECK(std::regex_search(table, std::regex("EVENT KEY")));
    CHECK(std::regex_search(table, std::regex("\\n\\d+ +stripe\\.events +evt_2 +1 ")));
}

TEST_CASE("consume: SIGTERM with a batch in hand finishes it, acks it, reads no more and exits 0", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"s"});
    rig.add_events("s", 50);
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning"});
    const std::string command =
        "echo x > " + rig.path("started") + "; cat > /dev/null; sleep 1; echo ok >> " + rig.path("done");
    auto consumer = start_consumer(rig, "g", {"--batch", "10", "--exec", command});
    REQUIRE(wait_until([&] { return !rig.read("started").empty(); }, 20s));
    consumer->signal(SIGTERM);
    REQUIRE(consumer->wait_for(30s) == 0);
    CHECK(rig.read("done") == "ok\n");
    const auto status = rig.group("g");
    CHECK(status["batches_in_flight"] == 0);  // acked before exiting
    CHECK(status["events_behind"] == 40);     // and nothing more was read
}

TEST_CASE("consume: at the shutdown timeout a batch still running is abandoned and comes back", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"s"});
    rig.add_events("s", 5);
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning", "--lease", "2s"});
    auto slow = start_consumer(rig, "g", {"--shutdown-timeout", "500ms", "--exec", "cat > /dev/null; sleep 30"});
    REQUIRE(wait_until([&] { return rig.group("g")["batches_in_flight"] == 1; }, 20s));
    slow->signal(SIGTERM);
    REQUIRE(slow->wait_for(10s) == 0);
    CHECK(log_says(*slow, "abandoned at the shutdown timeout"));
    CHECK(rig.group("g")["batches_in_flight"] == 1);  // not acked, not failed

    auto next = start_consumer(rig, "g", {"--exec", append_to(rig, "out")});
    REQUIRE(wait_until([&] { return rig.seq_counts("out").size() == 5; }, 30s));
    next->signal(SIGTERM);
    CHECK(next->wait_for(30s) == 0);
    CHECK(rig.lines("out").front()["delivery"] == 2);
}

TEST_CASE("consume --until-idle exits 0 once there is nothing to do", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"s"});
    rig.add_events("s", 25);
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning"});
    // The watermark may lag for a moment (any open transaction on the
    // cluster holds it); a second run picks up what the first did not see.
    REQUIRE(wait_until(
        [&] {
            run_tributary(rig.url(), {"consume", "g", "--until-idle", "--exec", append_to(rig, "out")});
            return rig.seq_counts("out").size() == 25;
        },
        30s));
}

TEST_CASE("consume: a PostgreSQL restart is said once, waited out, and nothing is lost or repeated", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"s"});
    rig.add_events("s", 300);
    run_tributary(rig.url(), {"group", "create", "g", "--from", "beginning"});
    auto consumer =
        start_consumer(rig, "g", {"--batch", "10", "--concurrency", "2", "--exec", append_to(rig, "out", "0.1")});
    REQUIRE(wait_until([&] { return rig.seq_counts("out").size() >= 50; }, 30s));

    const char* pg_tmp = std::getenv("TRIBUTARY_PG_TMP");
    const char* pg_dir = std::getenv("TRIBUTARY_TEST_PG_DIR");
    REQUIRE(pg_tmp);
    REQUIRE(pg_dir);
    ChildProcess outage({pg_tmp, "restart", pg_dir, "fast", "4"});
    REQUIRE(wait_until([&] { return log_says(*consumer, "database unavailable"); }, 20s));
    REQUIRE(outage.wait_for(60s) == 0);
    REQUIRE(wait_until([&] { return rig.seq_counts("out").size() == 300; }, 60s));
    consumer->signal(SIGTERM);
    REQUIRE(consumer->wait_for(30s) == 0);

    const auto log = consumer->err();
    const auto said = [&](const std::string& what) {
        std::size_t n = 0;
        for (auto at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
        return n;
    };
    INFO(log);
    CHECK(said("database unavailable") == 1);  // not once per worker, heartbeat or retry
    CHECK(said("database reachable again") == 1);
    // The outage (4 s) is shorter than the lease (30 s): acks that failed
    // were retried and recorded, so no batch came back.
    for (const auto& [seq, n] : rig.seq_counts("out")) CHECK(n == 1);
    CHECK(rig.group("g")["batches_in_flight"] == 0);
}
