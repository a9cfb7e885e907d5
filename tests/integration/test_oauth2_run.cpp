// OAuth2 client credentials through the real binary: two loader processes share one access
// token through PostgreSQL (the token endpoint is asked once), a revoked token is renewed once,
// and neither the client secret nor a token shows in logs, status, source list or /metrics.

#include <catch2/catch.hpp>

#include <csignal>
#include <thread>

#include <httplib.h>

#include "support/source_server.h"
#include "support/stored_truth.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

const char* const kClientId = "itest-client";
const char* const kSecret = "itest-secret-8f3a1c";
const int kMaxEvents = 1200;

const std::vector<std::string> kCredentials{std::string("CLIENT_ID=") + kClientId,
                                            std::string("CLIENT_SECRET=") + kSecret};

long long stored_count(const TestDatabase& db) {
    return std::stoll(db.scalar("SELECT count(*) FROM tributary.events"));
}

/// Waits until `condition` holds; fails the test when it never does.
template <typename Condition>
void wait_until(const char* what, Condition condition) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > deadline) FAIL("never: " << what);
        std::this_thread::sleep_for(50ms);
    }
}

std::string metrics_of(const ChildProcess& loader) {
    const auto port = std::stoi(wait_for_log(loader, R"(serving /metrics and /healthz on \S+ \(port (\d+)\))"));
    httplib::Client client("127.0.0.1", port);
    const auto response = client.Get("/metrics");
    REQUIRE(response);
    REQUIRE(response->status == 200);
    return response->body;
}

}  // namespace

TEST_CASE("OAuth2: two loaders share one token, a revoked one is renewed once, no secret shows anywhere",
          "[oauth2-run]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "oa.", "--backlog", "200", "--rate", "250", "--max-events",
                         std::to_string(kMaxEvents), "--oauth-client", std::string(kClientId) + ":" + kSecret,
                         "--oauth-expires-s", "3600", "--threads", "16"});
    run_tributary(db.url(), {"source",
                             "add",
                             "oauth",
                             "--url",
                             server.style_url("cursor", "oa.0"),
                             "--records",
                             "/data",
                             "--key",
                             "/key",
                             "--payload",
                             "/payload",
                             "--paginate",
                             "cursor",
                             "--next",
                             "/next_cursor",
                             "--batch-size",
                             "100",
                             "--interval-ms",
                             "1",
                             "--oauth2-token-url",
                             server.base_url() + "/oauth/token",
                             "--client-id-env",
                             "CLIENT_ID",
                             "--client-secret-env",
                             "CLIENT_SECRET"});

    ChildProcess first(tributary_args(db.url(), {"run", "--workers", "2", "--listen", "127.0.0.1:0"}), kCredentials);
    ChildProcess second(tributary_args(db.url(), {"run", "--workers", "2"}), kCredentials);
    wait_until("the backlog stored", [&] { return stored_count(db) >= 200; });
    CHECK(server.stats()["oauth"]["token_requests"] == 1);  // by four workers in two processes
    CHECK(server.stats()["oauth"]["tokens_issued"] == 1);
    const auto first_token = db.scalar("SELECT value FROM tributary.access_tokens");
    REQUIRE(first_token.size() == 64);
    const auto metrics = metrics_of(first);

    // Every token issued so far stops working: the next request's 401 renews it, once.
    server.revoke_tokens();
    wait_until("a new token", [&] { return db.scalar("SELECT value FROM tributary.access_tokens") != first_token; });
    wait_until("every event produced", [&] { return server.stats()["per_source"]["oa.0"]["produced"] == kMaxEvents; });
    first.signal(SIGTERM);
    second.signal(SIGTERM);
    REQUIRE(first.wait_for(30s) == 0);
    REQUIRE(second.wait_for(30s) == 0);
    ChildProcess rest(tributary_args(db.url(), {"run", "--workers", "2", "--until-idle"}), kCredentials);
    REQUIRE(rest.wait_for(60s) == 0);
    const auto second_token = db.scalar("SELECT value FROM tributary.access_tokens");
    INFO("first loader:\n" << first.err() << "\nsecond loader:\n" << second.err() << "\nlast run:\n" << rest.err());

    check_stored_exactly_once(db, server, "oauth", "oa.0", "cursor");
    const auto oauth = server.stats()["oauth"];
    INFO(oauth.dump());
    CHECK(oauth["token_requests"] == 2);
    CHECK(oauth["tokens_issued"] == 2);
    CHECK(oauth["rejected"].get<int>() >= 1);

    const auto status = run_tributary(db.url(), {"status", "--json"}).out;
    const auto list = run_tributary(db.url(), {"source", "list", "--json"}).out;
    const std::vector<std::pair<const char*, std::string>> shown{{"first loader's log", first.err() + first.out()},
                                                                 {"second loader's log", second.err() + second.out()},
                                                                 {"last run's log", rest.err() + rest.out()},
                                                                 {"status --json", status},
                                                                 {"source list --json", list},
                                                                 {"/metrics", metrics}};
    for (const auto& [where, text] : shown) {
        INFO(where);
        CHECK_THAT(text, !Catch::Contains(kSecret));
        CHECK_THAT(text, !Catch::Contains(first_token));
        CHECK_THAT(text, !Catch::Contains(second_token));
    }
    CHECK_THAT(list, Catch::Contains("CLIENT_SECRET"));  // the variable's name is what is stored
}
