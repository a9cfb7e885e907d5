// A user's first hour (issue 26): every command run as a login role without the group role it
// needs, or with the wrong one, through the real binary against the real PostgreSQL: one message
// that names the role and the `tributary grant` to run, exit code 1, and for the long-running
// commands a refusal at start, not a failure at every pass. Then the small texts: `migrate` says
// each thing once, PostgreSQL's errors in the logs end their line, and an age is never negative.

#include <catch2/catch.hpp>

#include <csignal>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "support/child_process.h"
#include "support/login_role.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

/// A command, the login role's wrong grants (none: ""), and the role it needs.
struct Refusal {
    std::vector<std::string> args;
    std::string held;    ///< the group role the login holds instead ("" for none)
    std::string needed;  ///< as `tributary grant` names it
};

/// What every refusal says: the role the command needs and the exact grant, for this user.
void check_refusal(const Completed& done, const std::string& user, const std::string& needed) {
    INFO(done.err);
    CHECK(done.out.empty());
    CHECK_THAT(done.err, Catch::StartsWith("tributary: permission denied"));
    CHECK_THAT(done.err, Catch::Contains("needs the role tributary_" + needed));
    CHECK_THAT(done.err, Catch::Contains("As the schema's owner, run: tributary grant " + needed + " " + user + "\n"));
    // Said once, and no blank line: libpq's trailing newline is not passed on.
    CHECK(count_of(done.err, "tributary grant") == 1);
    CHECK(done.err.find("\n\n") == std::string::npos);
    CHECK_THAT(done.err, !Catch::Contains("ERROR:"));
}

}  // namespace

TEST_CASE("each command refused a privilege names the role it needs and the grant to run, exit 1", "[refusals]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "refusals.src", "--url", "http://127.0.0.1:9/events"});
    run_tributary(db.url(), {"group", "create", "g"});
    run_tributary(db.url(), {"source", "add", "refusals.pub", "--published"});

    const std::vector<Refusal> refusals = {
        // The three.
        {{"run", "--max-runtime", "30s"}, "", "loader"},
        {{"status"}, "consumer", "admin"},
        {{"group", "list"}, "publisher", "admin"},
        // Every other command, as a login without its role.
        {{"run", "--until-idle", "--max-runtime", "30s"}, "consumer", "loader"},
        {{"status", "--json"}, "", "admin"},
        {{"source", "list"}, "consumer", "admin"},
        {{"source", "add", "mine", "--url", "http://127.0.0.1:9/x"}, "loader", "admin"},
        {{"source", "pause", "refusals.src"}, "consumer", "admin"},
        {{"source", "rewind", "refusals.src", "--to", "0"}, "loader", "admin"},
        {{"source", "remove", "refusals.src"}, "publisher", "admin"},
        {{"group", "create", "mine"}, "loader", "admin"},
        {{"group", "reset", "g", "--to", "end"}, "consumer", "admin"},
        {{"group", "delete", "g"}, "", "admin"},
        {{"dlq", "list", "g"}, "consumer", "admin"},
        {{"dlq", "replay", "g", "--all"}, "loader", "admin"},
        {{"retention", "list"}, "consumer", "admin"},
        {{"retention", "set", "--keep", "30d"}, "loader", "admin"},
        {{"log"}, "consumer", "admin"},
        {{"log", "partitions"}, "publisher", "admin"},
        {{"consume", "g", "--exec", "cat", "--max-runtime", "30s"}, "admin", "consumer"},
        {{"consume", "g", "--exec", "cat", "--max-runtime", "30s"}, "loader", "consumer"},
        {{"tail"}, "loader", "consumer"},
        {{"receive", "--listen", "127.0.0.1:0"}, "loader", "receiver"},
        {{"maintain", "--once"}, "loader", "maintainer"},
        {{"maintain"}, "", "maintainer"},
        {{"console", "--listen", "127.0.0.1:0"}, "admin", "console"},
    };
    for (std::size_t i = 0; i < refusals.size(); ++i) {
        const auto& refusal = refusals[i];
        std::string command;
        for (const auto& a : refusal.args) command += a + " ";
        INFO(command << "as " << (refusal.held.empty() ? "nobody" : refusal.held));
        LoginRole login(db, "login" + std::to_string(i));
        if (!refusal.held.empty()) run_tributary(db.url(), {"grant", refusal.held, login.name()});
        // A long-running command that did not refuse would run for its --max-runtime and exit 0.
        const auto done = run_tributary(as_user(db.url(), login.name()), refusal.args, 1);
        check_refusal(done, login.name(), refusal.needed);
        // Refused at start: no pass, no worker, no read was tried.
        CHECK_THAT(done.err, !Catch::Contains("starting"));
        CHECK_THAT(done.err, !Catch::Contains("pass failed"));
        CHECK_THAT(done.err, !Catch::Contains("read failed"));
    }
}

TEST_CASE("a command that does without a role it lacks says which grant would give it", "[refusals]") {
    TestDatabase db;
    run_tributary(db.url(), {"group", "create", "g"});
    LoginRole consumer(db, "consumer");
    run_tributary(db.url(), {"grant", "consumer", consumer.name()});
    // The consumer reads group_status, not which partitions the groups hold back.
    const auto list = run_tributary(as_user(db.url(), consumer.name()), {"group", "list"});
    CHECK_THAT(list.out, Catch::Contains("\ng "));
    CHECK_THAT(list.err,
               Catch::Contains("cannot tell which partitions groups hold back: permission denied for function "
                               "partition_retention (that needs the role tributary_admin: tributary grant "
                               "admin " +
                               consumer.name() + ")\n"));
}

TEST_CASE("the long-running commands name the privileges they lack, before the first pass", "[refusals]") {
    TestDatabase db;
    LoginRole consumer(db, "consumer");
    run_tributary(db.url(), {"grant", "consumer", consumer.name()});
    const auto done = run_tributary(as_user(db.url(), consumer.name()), {"run", "--max-runtime", "30s"}, 1);
    INFO(done.err);
    // The first three by name (the schema's, then tables' and views', columns', functions'), the rest counted.
    CHECK_THAT(done.err, Catch::StartsWith("tributary: permission denied: role " + consumer.name() +
                                           " lacks INSERT on tributary.access_tokens, SELECT on "
                                           "tributary.access_tokens, UPDATE on tributary.access_tokens and "));
    CHECK_THAT(done.err, Catch::Contains(" more (privileges of tributary_loader)\n"));
    CHECK_THAT(done.err, Catch::Contains("`tributary run` needs the role tributary_loader, which " + consumer.name() +
                                         " does not hold."));
}

TEST_CASE("a member of the role whose privileges this database lacks is told to migrate", "[refusals]") {
    TestDatabase db;
    LoginRole loader(db, "loader");
    run_tributary(db.url(), {"grant", "loader", loader.name()});
    const auto url = as_user(db.url(), loader.name());
    // As if tributary_loader had been created by hand after a migrate without CREATEROLE.
    db.exec("UPDATE tributary.schema_definitions SET roles = ''");
    db.exec("REVOKE ALL ON ALL TABLES IN SCHEMA tributary FROM tributary_loader");
    for (const auto& args : std::vector<std::vector<std::string>>{{"run", "--max-runtime", "30s"}, {"status"}}) {
        const auto done = run_tributary(url, args, 1);
        INFO(done.err);
        CHECK_THAT(done.err, Catch::Contains("which " + loader.name() + " holds, but the role lacks"));
        CHECK_THAT(done.err, Catch::Contains("As the schema's owner, run: tributary migrate\n"));
        CHECK_THAT(done.err, !Catch::Contains("tributary grant"));
    }
    run_tributary(db.url(), {"migrate"});
    run_tributary(url, {"run", "--until-idle", "--max-runtime", "60s", "--no-maintain"});
    run_tributary(url, {"status"});
}

TEST_CASE("migrate and grant refused say to run them as the schema's owner", "[refusals]") {
    TestDatabase db;
    LoginRole nobody(db, "nobody");
    const auto url = as_user(db.url(), nobody.name());
    const auto migrate = run_tributary(url, {"migrate"}, 1);
    CHECK_THAT(migrate.err, Catch::Contains("`tributary migrate` changes the schema: run it as the schema's owner"));
    CHECK_THAT(migrate.err, Catch::Contains("not as " + nobody.name()));
    const auto grant = run_tributary(url, {"grant", "loader", nobody.name()}, 1);
    CHECK_THAT(grant.err, Catch::Contains("run it as a role with CREATEROLE"));
    CHECK(grant.err.find("\n\n") == std::string::npos);
}

TEST_CASE("run stops when a grant is revoked while it loads, instead of failing every pass", "[refusals]") {
    TestDatabase db;
    run_tributary(db.url(),
                  {"source", "add", "refusals.src", "--url", "http://127.0.0.1:9/events", "--interval-ms", "50"});
    LoginRole loader(db, "loader");
    run_tributary(db.url(), {"grant", "loader", loader.name()});
    ChildProcess run(tributary_args(as_user(db.url(), loader.name()), {"run", "--workers", "2", "--no-maintain"}));
    wait_for_log(run, "starting 2 worker");
    db.exec("REVOKE SELECT, UPDATE ON tributary.gates FROM tributary_loader");
    REQUIRE(run.wait_for(60s) == 1);
    INFO(run.err());
    CHECK_THAT(run.err(), Catch::Contains("permission denied for table gates"));
    CHECK_THAT(run.err(), !Catch::Contains("skipped this pass"));
    CHECK_THAT(run.err(), !Catch::Contains("pass failed"));
}

TEST_CASE("migrate says each migration it applies once", "[refusals]") {
    TestDatabase db(false);
    const auto done = run_tributary(db.url(), {"migrate"});
    const auto all = done.out + done.err;
    INFO(all);
    CHECK(count_of(done.out, "applied 0001_") == 1);
    CHECK(count_of(all, "0001_") == 1);
    CHECK(count_of(all, "privileges/20_roles.sql") == 1);
    CHECK(run_tributary(db.url(), {"migrate"}).out == "schema is up to date\n");
}

TEST_CASE("a PostgreSQL error in the log ends its line: no blank line, in text and in JSON", "[refusals]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "refusals.src", "--url", "http://127.0.0.1:9/events"});
    for (const std::string format : {"text", "json"}) {
        // The loaders' schedule cannot be read while the test holds the sources: each pass fails
        // on the lock timeout, a PostgreSQL error with libpq's trailing newline.
        pqxx::connection holder(db.url());
        pqxx::work holding(holder);
        holding.exec("LOCK TABLE tributary.sources IN ACCESS EXCLUSIVE MODE");
        ChildProcess run(tributary_args(
            db.url(), {"--log-format", format, "run", "--workers", "1", "--no-maintain", "--poll-only"}));
        const auto line = wait_for_log(run, "(.*lock timeout.*)", 60s);
        run.signal(SIGTERM);
        REQUIRE(run.wait_for(60s));
        holding.abort();
        INFO(run.err());
        CHECK(run.err().find("\n\n") == std::string::npos);
        if (format == "json") {
            const auto record = nlohmann::json::parse(line);
            CHECK(record["msg"].get<std::string>().back() != '\n');
        }
    }
}

TEST_CASE("status never shows a negative age: a request stamped after its now() was 0.0s ago", "[refusals]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "refusals.src", "--url", "http://127.0.0.1:9/events"});
    // A loader's claim stamps last_request with its own transaction's now(), later than status's.
    db.exec(
        "UPDATE tributary.gates SET last_request = now() + interval '5 seconds',"
        " last_success_at = now() + interval '5 seconds', last_error_at = now() + interval '5 seconds',"
        " last_error = 'x'");
    const auto row = status_by_name(db.url())["refusals.src"];
    CHECK(row["seconds_since_last_request"].get<double>() == 0.0);
    CHECK(row["seconds_since_last_success"].get<double>() == 0.0);
    CHECK(row["seconds_since_last_error"].get<double>() == 0.0);
    const auto table = run_tributary(db.url(), {"status"}).out;
    INFO(table);
    CHECK_THAT(table, Catch::Contains("0.0s ago"));
    CHECK_THAT(table, !Catch::Contains("-0.0s"));
}

TEST_CASE("a value the database refuses is named by the flag that carried it, with the forms it takes", "[refusals]") {
    TestDatabase db;
    run_tributary(db.url(), {"group", "create", "g"});
    const auto reset = run_tributary(db.url(), {"group", "reset", "g", "--to", "yesterdy"}, 2).err;
    CHECK_THAT(reset, Catch::StartsWith("tributary: --to: invalid position 'yesterdy'\n"));
    CHECK_THAT(reset, Catch::Contains("'beginning', 'end' or a timestamp"));
    CHECK_THAT(run_tributary(db.url(), {"group", "create", "h", "--from", "nope"}, 2).err,
               Catch::StartsWith("tributary: --from: invalid position 'nope'"));
    CHECK_THAT(run_tributary(db.url(), {"group", "create", "h", "--pattern", "a..b"}, 2).err,
               Catch::StartsWith("tributary: --pattern: invalid pattern 'a..b'"));
    CHECK_THAT(run_tributary(db.url(), {"tail", "--from", "nope"}, 2).err,
               Catch::StartsWith("tributary: --from: invalid position 'nope'"));
    CHECK_THAT(run_tributary(db.url(), {"tail", "--pattern", "x.."}, 2).err,
               Catch::StartsWith("tributary: --pattern: invalid pattern 'x..'"));
    CHECK_THAT(run_tributary(db.url(), {"retention", "set", "--keep", "5x"}, 2).err,
               Catch::StartsWith("tributary: --keep: invalid duration '5x'") && Catch::Contains("e.g. 30d"));
    CHECK_THAT(run_tributary(db.url(), {"retention", "set", "--max-size", "0"}, 2).err,
               Catch::StartsWith("tributary: --max-size: invalid size '0'"));
    CHECK_THAT(run_tributary(db.url(), {"run", "--maintainer-lease", "500ms"}, 2).err,
               Catch::StartsWith("tributary: --maintainer-lease '500ms': the maintainer's lease must be at least 1s"));
    CHECK_THAT(run_tributary(db.url(), {"maintain", "--lease", "500ms"}, 2).err,
               Catch::StartsWith("tributary: --lease '500ms'"));
}
