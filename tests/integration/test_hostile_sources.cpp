// Every bad response of docs/design.md §3, served for real over HTTP: nothing of
// it is stored, the cursor stays, status names the cause, and the healthy
// source beside them loads everything.

#include <catch2/catch.hpp>

#include <thread>

#include "support/source_server.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

struct Hostile {
    const char* mode;
    const char* state;  ///< expected state in status
    const char* cause;  ///< expected in the last error
};

const Hostile kHostile[] = {
    {"truncated", "transient", "JSON"},
    {"malformed", "transient", "JSON"},
    {"not-json", "transient", "content type"},
    {"wrong-content-type", "transient", "content type"},
    {"huge", "transient", "larger than"},
    {"slow-body", "transient", "timed out"},
    {"deep-nesting", "transient", "nest"},
    {"out-of-order", "failing", "increasing"},
    {"at-or-below-cursor", "failing", "cursor"},
    {"missing-id", "failing", "id"},
    {"string-id", "failing", "string"},
    {"float-id", "failing", "floating"},
    {"nul-in-payload", "failing", "U+0000"},
    {"http-500", "transient", "500"},
    {"http-503-bare", "transient", "503"},
    {"http-404", "failing", "404"},
    {"http-429", "throttled", "429"},
    {"http-429-date", "throttled", "429"},
    {"http-503", "throttled", "503"},
};

}  // namespace

TEST_CASE("hostile responses store nothing and say why in status") {
    TestDatabase db;
    const int hostile = static_cast<int>(std::size(kHostile));
    std::vector<std::string> options{
        "--sources", std::to_string(hostile + 1), "--prefix", "bad.src-", "--backlog", "30", "--threads", "32"};
    for (int i = 0; i < hostile; ++i) {
        options.push_back("--fault");
        options.push_back("bad.src-" + std::to_string(i + 1) + "=" + kHostile[i].mode);
    }
    SourceServer server(options);
    for (int i = 0; i <= hostile; ++i) {
        const auto name = "bad.src-" + std::to_string(i);
        run_tributary(db.url(), {"source", "add", name, "--url", server.events_url(name), "--timeout-ms", "1500"});
    }

    const auto run = run_tributary(db.url(), {"run", "--workers", "4", "--until-idle"});
    const auto status = status_by_name(db.url());
    INFO("loader log:\n" << run.err);

    CHECK(status["bad.src-0"]["events_stored"] == 30);
    CHECK(status["bad.src-0"]["state"] == "ok");
    for (int i = 0; i < hostile; ++i) {
        const auto name = "bad.src-" + std::to_string(i + 1);
        const auto& row = status[name];
        INFO(kHostile[i].mode << ": " << row.dump());
        CHECK(row["events_stored"] == 0);
        CHECK(row["cursor"] == 0);
        CHECK(row["state"] == kHostile[i].state);
        REQUIRE(row["last_error"].is_string());
        CHECK_THAT(row["last_error"].get<std::string>(), Catch::Contains(kHostile[i].cause));
        // The loader's log names the source with the cause.
        CHECK_THAT(run.err, Catch::Contains("source=" + name));
    }
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "30");
}

TEST_CASE("a source that healed is loaded after its backoff") {
    TestDatabase db;
    SourceServer server(
        {"--sources", "1", "--prefix", "heal.src-", "--backlog", "20", "--fault", "heal.src-0=http-503-bare"});
    run_tributary(db.url(), {"source", "add", "heal.src-0", "--url", server.events_url("heal.src-0")});
    const auto failing = run_tributary(db.url(), {"run", "--until-idle"});
    INFO("first run: " << failing.err);
    CHECK(status_by_name(db.url())["heal.src-0"]["state"] == "transient");

    server.set_fault("heal.src-0", "none");
    std::this_thread::sleep_for(1100ms);  // the first transient backoff is at most 1 s
    const auto healed = run_tributary(db.url(), {"run", "--until-idle"});
    INFO("second run: " << healed.err);
    const auto row = status_by_name(db.url())["heal.src-0"];
    CHECK(row["state"] == "ok");
    CHECK(row["events_stored"] == 20);
}
