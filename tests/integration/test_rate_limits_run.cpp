// Rate limits served for real: the source server refuses the request past its budget with a
// 429. A loader that obeys the rate-limit fields of the 200s (X-RateLimit-Remaining: 0 and its
// reset, or the IETF RateLimit fields) waits for the next window and is never refused.

#include <catch2/catch.hpp>

#include "support/source_server.h"
#include "support/stored_truth.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

const int kBudget = 4;  ///< requests per source and window
const int kBacklog = 1000;
const int kBatch = 100;

}  // namespace

TEST_CASE("two loaders obey the rate-limit fields of the answers: no 429, every record loaded", "[ratelimit]") {
    TestDatabase db;
    // rl.0 sends GitHub's X-RateLimit fields, rl.1 the IETF RateLimit/RateLimit-Policy ones.
    SourceServer server({"--sources", "2", "--prefix", "rl.", "--backlog", std::to_string(kBacklog), "--rate-limit",
                         std::to_string(kBudget), "--rate-window-ms", "1000", "--fault", "rl.1=ratelimit-ietf",
                         "--threads", "16"});
    for (const auto& [name, source] : {std::pair{"x-ratelimit", "rl.0"}, std::pair{"ietf", "rl.1"}})
        run_tributary(db.url(),
                      {"source", "add", name, "--url", server.style_url("after-key", source), "--records", "/data",
                       "--key", "/key", "--payload", "/payload", "--paginate", "after-key", "--has-more", "/has_more",
                       "--batch-size", std::to_string(kBatch), "--interval-ms", "1"});

    ChildProcess first(tributary_args(db.url(), {"run", "--workers", "2", "--until-idle"}));
    ChildProcess second(tributary_args(db.url(), {"run", "--workers", "2", "--until-idle"}));
    REQUIRE(first.wait_for(60s) == 0);
    REQUIRE(second.wait_for(60s) == 0);
    INFO("first loader:\n" << first.err() << "\nsecond loader:\n" << second.err());

    const auto stats = server.stats()["per_source"];
    INFO(stats.dump());
    for (const auto& [name, source] : {std::pair{"x-ratelimit", "rl.0"}, std::pair{"ietf", "rl.1"}}) {
        INFO(name);
        check_stored_exactly_once(db, server, name, source, "after-key");
        // The budget was spent (more requests than one window allows), and obeyed: every
        // request with Remaining: 0 in its answer held both processes off until the reset.
        CHECK(stats[source]["requests"].get<int>() > kBudget);
        CHECK(stats[source]["rate_limited"] == 0);
    }
}
