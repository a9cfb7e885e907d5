// Behind a connection pooler (issue 26): a real PgBouncer (scripts/pgbouncer-tmp) in front of
// the test cluster. In transaction mode, the commands that keep state on their sessions refuse
// before they take anything, and what needs no session of its own works through it; in
// session mode everything works. And --max-runtime bounds the wait for a database that never
// answers.

#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <pqxx/pqxx>

#include "support/child_process.h"
#include "support/consume_rig.h"
#include "support/loopback_socket.h"
#include "support/pgbouncer.h"
#include "support/source_server.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

bool says(const std::string& text, const std::string& pattern) { return std::regex_search(text, std::regex(pattern)); }

/// Advisory locks any session holds on the cluster's database `db`.
int advisory_locks(const TestDatabase& db) {
    return std::stoi(
        db.scalar("SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
                  "WHERE l.locktype = 'advisory' AND d.datname = current_database()"));
}

std::size_t lines_in(const std::string& path) {
    std::ifstream in(path);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
}

/// A database URL whose server accepts connections and never answers.
std::string silent_database_url(const LoopbackSocket& listening) {
    return "postgresql://postgres@127.0.0.1:" + std::to_string(listening.port()) + "/tributary";
}

}  // namespace

TEST_CASE("run behind PgBouncer in transaction mode: exit 1 before any lock, a message that links the docs",
          "[pooler]") {
    TestDatabase db;
    SourceServer server({"--sources", "2", "--prefix", "pool.src-", "--backlog", "30"});
    for (const auto* name : {"pool.src-0", "pool.src-1"})
        run_tributary(db.url(), {"source", "add", name, "--url", server.events_url(name)});
    PgBouncer pooler(db.url(), "transaction");

    const auto refused = run_tributary(pooler.url(), {"run", "--workers", "4", "--until-idle"}, 1);
    INFO(refused.err);
    CHECK(says(refused.err, "`tributary run` needs database sessions of its own"));
    CHECK(says(refused.err, "pool_mode=transaction"));
    CHECK(says(refused.err, "Behind a connection pooler"));
    CHECK(says(refused.err, "/usr/share/doc/tributary/docs/operations.md"));
    CHECK_FALSE(says(refused.err, "prepared statement \"tributary_"));  // the errors it gave before
    // Nothing taken, nothing asked, nothing left on the pooler's server sessions.
    CHECK(advisory_locks(db) == 0);
    CHECK(db.scalar("SELECT count(*) FROM tributary.gates WHERE last_request IS NOT NULL") == "0");
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "0");

    // The other commands that keep state on their sessions refuse alike; migrate too.
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"receive", "--listen", "127.0.0.1:0"}, {"maintain", "--once"}, {"migrate"}}) {
        const auto other = run_tributary(pooler.url(), args, 1);
        INFO(other.err);
        CHECK(says(other.err, "`tributary " + args[0] + "` needs database sessions of its own"));
    }
    CHECK(advisory_locks(db) == 0);

    // A loader straight at PostgreSQL finds no stranger's lock and loads everything.
    const auto direct = run_tributary(db.url(), {"run", "--workers", "4", "--until-idle"});
    CHECK_FALSE(says(direct.err, "locked by a session"));
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "60");
}

TEST_CASE("through PgBouncer in transaction mode: publish, consumer_next and consume --poll-only work", "[pooler]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "pool.pub", "--published"});
    PgBouncer pooler(db.url(), "transaction");
    run_tributary(pooler.url(), {"group", "create", "sql", "--pattern", "pool.*", "--from", "beginning"});
    run_tributary(pooler.url(), {"group", "create", "cli", "--pattern", "pool.*", "--from", "beginning"});

    {
        pqxx::connection app(pooler.url());
        for (int i = 0; i < 40; ++i) {
            pqxx::work tx(app);
            tx.exec_params("SELECT tributary.publish('pool.pub', $1, $2::jsonb)", "k-" + std::to_string(i),
                           "{\"n\": " + std::to_string(i) + "}");
            tx.commit();
        }
    }
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "40");

    // From SQL through the pooler, as any client library would: each call its own transaction.
    std::set<std::string> keys;
    REQUIRE(wait_until(
        [&] {
            pqxx::connection consumer(pooler.url());
            std::optional<std::string> batch, token;
            for (int calls = 0; calls < 20; ++calls) {
                pqxx::nontransaction tx(consumer);
                const auto row = tx.exec_params1(
                    "SELECT batch_id, lease_token, events FROM tributary.consumer_next('sql', 'c1', 15, $1, $2)",
                    batch ? batch->c_str() : nullptr, token ? token->c_str() : nullptr);
                if (row[0].is_null()) break;
                batch = row[0].as<std::string>();
                token = row[1].as<std::string>();
                for (const auto& event : nlohmann::json::parse(row[2].as<std::string>()))
                    keys.insert(event["event_key"].get<std::string>());
            }
            if (batch) {
                pqxx::nontransaction tx(consumer);
                tx.exec_params("SELECT tributary.consumer_ack($1::bigint, $2::uuid)", *batch, *token);
            }
            return keys.size() == 40;
        },
        30s));

    // `tail` reads through it; `tail --follow` needs --poll-only.
    const auto tailed = run_tributary(pooler.url(), {"tail", "--pattern", "pool.*"});
    CHECK(std::count(tailed.out.begin(), tailed.out.end(), '\n') == 40);
    const auto follow = run_tributary(pooler.url(), {"tail", "--pattern", "pool.*", "--follow"}, 1);
    CHECK(says(follow.err, "add --poll-only"));

    // `consume` refuses without --poll-only (LISTEN), and works with it.
    const auto refused = run_tributary(pooler.url(), {"consume", "cli", "--until-idle", "--exec", "cat"}, 1);
    INFO(refused.err);
    CHECK(says(refused.err, "--poll-only"));
    const std::string out = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/pooler-consume-" +
                            std::to_string(getpid()) + ".ndjson";
    std::remove(out.c_str());
    REQUIRE(wait_until(
        [&] {
            run_tributary(pooler.url(),
                          {"consume", "cli", "--poll-only", "--until-idle", "--batch", "7", "--exec", "cat >> " + out});
            return lines_in(out) >= 40;
        },
        30s));
    CHECK(lines_in(out) == 40);
    std::remove(out.c_str());
    CHECK(advisory_locks(db) == 0);
}

TEST_CASE("run behind PgBouncer in session mode loads as it does straight at PostgreSQL", "[pooler]") {
    TestDatabase db;
    SourceServer server({"--sources", "2", "--prefix", "pool.src-", "--backlog", "30"});
    for (const auto* name : {"pool.src-0", "pool.src-1"})
        run_tributary(db.url(), {"source", "add", name, "--url", server.events_url(name)});
    PgBouncer pooler(db.url(), "session");
    const auto run = run_tributary(pooler.url(), {"run", "--workers", "2", "--until-idle"});
    INFO(run.err);
    CHECK(says(run.err, "through a proxy that keeps each session"));
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "60");
}

TEST_CASE("--max-runtime bounds the wait behind a full pool, saying so while it waits", "[pooler]") {
    TestDatabase db;
    PgBouncer pooler(db.url(), "session", 1);
    pqxx::connection holder(pooler.url());  // takes the pool's one server session, and keeps it
    pqxx::nontransaction(holder).exec("SELECT 1");

    ChildProcess run(tributary_args(pooler.url(), {"run", "--max-runtime", "7s"}));
    const auto code = run.wait_for(60s);
    INFO(run.err());
    REQUIRE(code);
    CHECK(*code == 1);
    CHECK(says(run.err(), "still waiting for the database"));
    CHECK(says(run.err(), "max runtime 7s reached while waiting for the database"));
    CHECK(advisory_locks(db) == 0);
}

TEST_CASE("--max-runtime ends a run whose database stops answering while it loads", "[pooler]") {
    TestDatabase db;
    PgBouncer pooler(db.url(), "session");
    ChildProcess run(tributary_args(pooler.url(), {"run", "--workers", "2", "--max-runtime", "6s"}));
    wait_for_log(run, "step=activity ok");  // loading, and the maintainer holds its lease
    pooler.signal(SIGSTOP);                 // from here, no statement is answered
    const auto code = run.wait_for(60s);
    INFO(run.err());
    REQUIRE(code);
    CHECK(*code == 1);
    CHECK(says(run.err(), "max runtime 6s reached, stopping"));
    CHECK(says(run.err(), "still waiting on the database: exiting now"));
    pooler.signal(SIGCONT);
    // The loader's sessions went with its connections: nothing of it is left.
    REQUIRE(wait_until([&] { return advisory_locks(db) == 0; }, 30s));
}

TEST_CASE("--max-runtime bounds the wait for a server that accepts connections and never answers", "[pooler]") {
    LoopbackSocket silent(LoopbackSocket::Mode::listening);
    ChildProcess run(tributary_args(silent_database_url(silent), {"run", "--max-runtime", "6s"}));
    const auto code = run.wait_for(60s);
    INFO(run.err());
    REQUIRE(code);
    CHECK(*code == 1);
    CHECK(says(run.err(), "still waiting for the database"));
    CHECK(says(run.err(), "max runtime 6s reached while waiting for the database"));
}

TEST_CASE("status: a source whose fetch a stop abandoned is ok, not throttled", "[pooler]") {
    TestDatabase db;
    SourceServer server({"--sources", "1", "--prefix", "pool.src-", "--backlog", "5"});
    run_tributary(db.url(),
                  {"source", "add", "pool.src-0", "--url", server.events_url("pool.src-0"), "--interval-ms", "1000"});
    run_tributary(db.url(), {"run", "--until-idle"});
    REQUIRE(status_by_name(db.url())["pool.src-0"]["state"] == "ok");

    // The next fetch hangs until the max runtime stops the loader: its turn is released.
    db.exec("UPDATE tributary.gates SET next_allowed_at = now()");
    server.set_fault("pool.src-0", "slow-body");
    const auto before = db.scalar("SELECT last_request FROM tributary.gates");
    run_tributary(db.url(), {"run", "--max-runtime", "2s"});
    REQUIRE(db.scalar("SELECT last_request FROM tributary.gates") != before);  // a turn was taken, then released
    REQUIRE(db.scalar("SELECT state FROM tributary.gates") == "ok");
    const auto status = status_by_name(db.url())["pool.src-0"];
    INFO(status.dump());
    CHECK(status["state"] == "ok");
}
