// `tributary tail`, `group` and `dlq` from the command line, and what bad
// usage of the consumer commands answers: exit 2 with a message that says
// what is wrong, exit 1 for a group that does not exist (as for sources).

#include <catch2/catch.hpp>

#include <csignal>
#include <regex>
#include <thread>

#include "support/consume_rig.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

std::vector<nlohmann::json> parse_lines(const std::string& text) {
    std::vector<nlohmann::json> out;
    std::size_t start = 0;
    for (auto end = text.find('\n'); end != std::string::npos; start = end + 1, end = text.find('\n', start))
        out.push_back(nlohmann::json::parse(text.substr(start, end - start)));
    return out;
}

/// Runs a command that must fail with `code`; returns its stderr.
std::string fails(const ConsumeRig& rig, std::vector<std::string> args, int code) {
    return run_tributary(rig.url(), std::move(args), code).err;
}

}  // namespace

TEST_CASE("tail prints NDJSON of the matching sources only, in log order", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"orders.eu", "orders.us", "orders.eu.returns", "billing"});
    for (const auto* s : {"orders.eu", "orders.us", "orders.eu.returns", "billing"}) rig.add_events(s, 30);

    const auto check = [&](const std::string& pattern, const std::vector<std::string>& sources) {
        const auto lines = parse_lines(run_tributary(rig.url(), {"tail", "--pattern", pattern}).out);
        CHECK(lines.size() == 30 * sources.size());
        std::int64_t last = 0;
        for (const auto& line : lines) {
            CHECK(std::find(sources.begin(), sources.end(), line.at("source").get<std::string>()) != sources.end());
            CHECK(line.at("seq").get<std::int64_t>() > last);
            last = line.at("seq").get<std::int64_t>();
            CHECK(line.at("payload").at("n") == line.at("event_id"));
            CHECK(line.at("event_key") == std::to_string(line.at("event_id").get<std::int64_t>()));
            CHECK(line.contains("loaded_at"));
        }
    };
    check("orders.*", {"orders.eu", "orders.us"});
    check("orders.>", {"orders.eu", "orders.us", "orders.eu.returns"});
    check("*.eu", {"orders.eu"});
    check(">", {"orders.eu", "orders.us", "orders.eu.returns", "billing"});
    CHECK(run_tributary(rig.url(), {"tail", "--from", "end"}).out.empty());
    const auto first = run_tributary(rig.url(), {"tail", "--pattern", "billing"}).out;
    CHECK(first.rfind("{\"seq\":", 0) == 0);
    CHECK(first.find("\"big\": 123456789012345678901234567890") != std::string::npos);
}

TEST_CASE("tail: an event of a source keyed by text has its key as event_key and a null event_id", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"orders.eu"});
    rig.add_keyed_source("stripe.events");
    rig.add_keyed_events("stripe.events", {"evt_1", R"(["42","2024-05-01T10:00:00Z"])"});
    rig.add_events("orders.eu", 1);
    const auto out = run_tributary(rig.url(), {"tail"}).out;
    const auto lines = parse_lines(out);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0]["source"] == "stripe.events");
    CHECK(lines[0]["event_id"].is_null());
    CHECK(lines[0]["event_key"] == "evt_1");
    CHECK(lines[1]["event_id"].is_null());
    CHECK(lines[1]["event_key"] == R"(["42","2024-05-01T10:00:00Z"])");
    CHECK(lines[1]["payload"]["key"] == lines[1]["event_key"]);
    CHECK(lines[2]["source"] == "orders.eu");
    CHECK(lines[2]["event_id"] == 1);
    CHECK(lines[2]["event_key"] == "1");
    // event_key follows event_id, the fields before them as they were.
    CHECK(out.rfind(R"({"seq":)", 0) == 0);
    CHECK(out.find(R"("source":"stripe.events","event_id":null,"event_key":"evt_1","payload":)") != std::string::npos);
}

TEST_CASE("tail --follow prints events committed after it started, until SIGTERM", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"orders.eu", "billing"});
    rig.add_events("orders.eu", 5);
    ChildProcess tail(tributary_args(rig.url(), {"tail", "--follow", "--pattern", "orders.*"}));
    std::this_thread::sleep_for(500ms);  // at the end of the log by now
    rig.add_events("billing", 5);
    rig.add_events("orders.eu", 3);
    REQUIRE(wait_until([&] { return parse_lines(tail.out()).size() >= 3; }, 20s));
    tail.signal(SIGTERM);
    REQUIRE(tail.wait_for(10s) == 0);
    const auto lines = parse_lines(tail.out());
    REQUIRE(lines.size() == 3);  // only the new ones (default --from end), only orders.*
    for (std::size_t i = 0; i < lines.size(); ++i) {
        CHECK(lines[i]["source"] == "orders.eu");
        CHECK(lines[i]["event_id"] == 6 + static_cast<int>(i));
        CHECK(lines[i]["event_key"] == std::to_string(6 + i));
    }
}

TEST_CASE("group create/list/reset/delete from the command line", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"orders.eu", "billing"});
    rig.add_events("orders.eu", 12);
    rig.add_events("billing", 4);
    run_tributary(rig.url(), {"group", "create", "all", "--from", "beginning"});
    run_tributary(rig.url(), {"group", "create", "eu", "--pattern", "*.eu", "--from", "beginning", "--max-deliveries",
                              "7", "--lease", "45s", "--ordered"});
    run_tributary(rig.url(), {"group", "create", "late"});  // --from end by default
    auto eu = rig.group("eu");
    CHECK(eu["pattern"] == "*.eu");
    CHECK(eu["max_deliveries"] == 7);
    CHECK(eu["lease_ms"] == 45000);
    CHECK(eu["ordered"] == true);
    CHECK(rig.group("all")["events_behind"] == 16);
    CHECK(eu["events_behind"] == 12);
    CHECK(rig.group("late")["events_behind"] == 0);
    const auto table = run_tributary(rig.url(), {"group", "list"}).out;
    CHECK(std::regex_search(table, std::regex("\\neu +\\*\\.eu +12 ")));

    run_tributary(rig.url(), {"group", "reset", "late", "--to", "beginning"});
    CHECK(rig.group("late")["events_behind"] == 16);
    run_tributary(rig.url(), {"group", "reset", "all", "--to", "end"});
    CHECK(rig.group("all")["events_behind"] == 0);

    CHECK(run_tributary(rig.url(), {"group", "delete", "late"}).out == "deleted group late\n");
    CHECK(fails(rig, {"group", "delete", "late"}, 1).find("no consumer group named 'late'") != std::string::npos);
    CHECK(fails(rig, {"group", "create", "eu"}, 1).find("already exists") != std::string::npos);
}

TEST_CASE("consumer commands: bad usage exits 2 saying what is wrong; an unknown group exits 1", "[consume]") {
    ConsumeRig rig;
    rig.add_sources({"s"});
    run_tributary(rig.url(), {"group", "create", "g"});

    CHECK(fails(rig, {"group", "create", "x", "--pattern", "a.>.b"}, 2).find("invalid pattern 'a.>.b'") !=
          std::string::npos);
    CHECK(fails(rig, {"group", "create", "x", "--pattern", "a..b"}, 2).find("invalid pattern") != std::string::npos);
    CHECK(fails(rig, {"group", "create", "x", "--from", "last tuesday"}, 2).find("invalid position 'last tuesday'") !=
          std::string::npos);
    CHECK(fails(rig, {"group", "create", "bad name!"}, 2).find("invalid group name") != std::string::npos);
    CHECK(fails(rig, {"group", "create", "x", "--lease", "soon"}, 2).find("invalid duration 'soon'") !=
          std::string::npos);
    CHECK(fails(rig, {"group", "create", "x", "--max-deliveries", "0"}, 2).find("--max-deliveries") !=
          std::string::npos);
    CHECK(fails(rig, {"group", "reset", "g", "--to", "someday"}, 2).find("invalid position") != std::string::npos);
    CHECK(fails(rig, {"group", "reset", "g"}, 2).find("--to is required") != std::string::npos);

    CHECK(fails(rig, {"consume", "g"}, 2).find("--exec is required") != std::string::npos);
    CHECK(fails(rig, {"consume", "g", "--exec", "true", "--batch", "0"}, 2).find("--batch") != std::string::npos);
    CHECK(fails(rig, {"consume", "g", "--exec", "true", "--concurrency", "0"}, 2).find("--concurrency") !=
          std::string::npos);
    CHECK(fails(rig, {"consume", "g", "--exec", "true", "--shutdown-timeout", "-1"}, 2).find("invalid duration") !=
          std::string::npos);
    CHECK(fails(rig, {"consume", "nope", "--exec", "true"}, 1).find("no consumer group named 'nope'") !=
          std::string::npos);

    CHECK(fails(rig, {"tail", "--pattern", "a.>.b"}, 2).find("invalid pattern") != std::string::npos);
    CHECK(fails(rig, {"tail", "--from", "yesterday-ish"}, 2).find("invalid position") != std::string::npos);

    CHECK(fails(rig, {"dlq", "list", "nope"}, 1).find("no consumer group named 'nope'") != std::string::npos);
    CHECK(fails(rig, {"dlq", "replay", "g"}, 2).find("--all, or --seq N") != std::string::npos);
    CHECK(fails(rig, {"dlq", "replay", "g", "--all", "--seq", "3"}, 2).find("excludes") != std::string::npos);
    CHECK(fails(rig, {"dlq", "replay", "nope", "--all"}, 1).find("no consumer group named 'nope'") !=
          std::string::npos);
    CHECK(fails(rig, {"dlq", "replay", "g", "--seq", "12345"}, 1).find("no dead letter with seq 12345") !=
          std::string::npos);
    CHECK(run_tributary(rig.url(), {"dlq", "replay", "g", "--all"}).out == "replayed 0 dead letters of group g\n");
    CHECK(run_tributary(rig.url(), {"dlq", "list", "g", "--json"}).out == "[]\n");
}
