// Least privilege: the group roles `migrate` creates (sql/privileges/), each
// given to a login role of its own, which then does its job through the CLI
// or the SQL API, and is refused the others' jobs.

#include <catch2/catch.hpp>

#include <algorithm>

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "postgres/migrator.h"
#include "support/login_role.h"
#include "support/source_server.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary;
using namespace tributary::testing;

TEST_CASE("migrate creates the NOLOGIN group roles and leaves PUBLIC nothing in schema tributary", "[roles]") {
    TestDatabase db;
    CHECK(db.scalar("SELECT string_agg(rolname || ':' || rolcanlogin, ',' ORDER BY rolname) FROM pg_roles"
                    " WHERE rolname IN ('tributary_loader', 'tributary_consumer', 'tributary_admin')") ==
          "tributary_admin:false,tributary_consumer:false,tributary_loader:false");
    // No function PUBLIC may execute (a NULL acl is the default: PUBLIC may).
    CHECK(db.scalar("SELECT count(*) FROM pg_proc p WHERE p.pronamespace = 'tributary'::regnamespace"
                    " AND (p.proacl IS NULL OR EXISTS (SELECT FROM aclexplode(p.proacl) a"
                    "                                  WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))") == "0");
    CHECK(db.scalar("SELECT has_schema_privilege('public', 'tributary', 'USAGE')") == "f");

    // A role that may use the schema but holds none of the three roles
    // cannot execute even the public API, let alone the internals.
    LoginRole stranger(db, "stranger");
    db.exec("GRANT USAGE ON SCHEMA tributary TO " + stranger.name());
    const auto url = as_user(db.url(), stranger.name());
    CHECK(denied(url, "SELECT tributary.loader_claim(1, 1, 1000)"));
    CHECK(denied(url, "SELECT tributary.pattern_regex('>')"));
    CHECK(denied(url, "SELECT * FROM tributary.consumer_read('g', 'c')"));
    CHECK(denied(url, "SELECT name FROM tributary.sources"));
}

TEST_CASE("each role does its job and nothing else", "[roles]") {
    TestDatabase db;
    LoginRole loader(db, "loader"), consumer(db, "consumer"), admin(db, "admin");
    run_tributary(db.url(), {"grant", "loader", loader.name()});
    run_tributary(db.url(), {"grant", "tributary_consumer", consumer.name()});
    CHECK(run_tributary(db.url(), {"grant", "admin", admin.name()}).out ==
          "granted tributary_admin to " + admin.name() + "\n");
    const auto loader_url = as_user(db.url(), loader.name());
    const auto consumer_url = as_user(db.url(), consumer.name());
    const auto admin_url = as_user(db.url(), admin.name());

    // The admin adds (with a secret header and a password in the URL),
    // pauses, resumes and removes sources, creates a group, reads status.
    SourceServer server({"--sources", "1", "--prefix", "roles.src-", "--backlog", "30"});
    const auto url_with_password =
        server.events_url("roles.src-0").insert(std::string("http://").size(), "reader:hunter2@");
    run_tributary(admin_url, {"source", "add", "roles.src-0", "--url", url_with_password, "--header",
                              "Authorization: Bearer s3cr3t"});
    run_tributary(admin_url, {"source", "add", "roles.spare", "--url", server.base_url() + "/nothing"});
    run_tributary(admin_url, {"source", "pause", "roles.spare"});
    run_tributary(admin_url, {"source", "resume", "roles.spare"});
    // A source's OAuth2 token goes with it, though the admin may not read it.
    db.exec(
        "INSERT INTO tributary.access_tokens (source_id, value)"
        " SELECT id, 'x' FROM tributary.sources WHERE name = 'roles.spare'");
    run_tributary(admin_url, {"source", "remove", "roles.spare"});
    CHECK(db.scalar("SELECT count(*) FROM tributary.access_tokens") == "0");
    run_tributary(admin_url, {"group", "create", "g", "--pattern", "roles.>", "--from", "beginning"});
    run_tributary(admin_url, {"group", "create", "g2", "--pattern", "roles.>", "--from", "beginning"});

    // The loader loads every event. Its unit's `migrate` (docs/tributary.service) passes: the
    // owner has migrated, so there is nothing to change and nothing it may not do.
    CHECK(run_tributary(loader_url, {"migrate"}).err.find("error") == std::string::npos);
    run_tributary(loader_url, {"run", "--until-idle", "--max-runtime", "60s"});
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "30");
    run_tributary(loader_url, {"status", "--json"});

    // The consumer reads and acks, reads the log, sees source names.
    {
        pqxx::connection c(consumer_url);
        pqxx::nontransaction tx(c);
        const auto batch = tx.exec("SELECT batch_id, lease_token FROM tributary.consumer_read('g', 'c1', 100)");
        REQUIRE(batch.size() == 30);
        CHECK(tx.exec_params1("SELECT tributary.consumer_ack($1, $2::uuid)", batch[0][0].as<long long>(),
                              batch[0][1].as<std::string>())[0]
                  .as<bool>());
        CHECK(tx.exec("SELECT * FROM tributary.read_log('>', NULL, NULL, 10)").size() == 10);
        CHECK(tx.exec1("SELECT name FROM tributary.sources")[0].as<std::string>() == "roles.src-0");
        CHECK(tx.exec1("SELECT events_behind FROM tributary.group_status WHERE name = 'g'")[0].as<int>() == 0);
    }
    // And through the CLI: tail, and consume a whole group.
    const auto tailed = run_tributary(consumer_url, {"tail", "--pattern", "roles.>"}).out;
    CHECK(std::count(tailed.begin(), tailed.end(), '\n') == 30);
    CHECK(tailed.find("hunter2") == std::string::npos);
    run_tributary(consumer_url, {"consume", "g2", "--exec", "cat > /dev/null", "--until-idle", "--max-runtime", "60s"});
    CHECK(db.scalar("SELECT events_behind + batches_in_flight FROM tributary.group_status WHERE name = 'g2'") == "0");
    run_tributary(admin_url, {"group", "list"});
    run_tributary(admin_url, {"dlq", "list", "g"});
    // The log's status: `status` as the loader or the admin, `log` as the admin.
    for (const auto* url : {&loader_url, &admin_url}) {
        const auto status = run_tributary(*url, {"status"}).out;
        CHECK_THAT(status, Catch::Contains("\nLOG\n"));
        CHECK_THAT(status, !Catch::Contains("log: unavailable"));
    }
    CHECK(nlohmann::json::parse(run_tributary(admin_url, {"log", "--json"}).out)["partitions"].get<int>() >= 1);
    run_tributary(admin_url, {"log", "partitions"});
    CHECK(nlohmann::json::parse(run_tributary(admin_url, {"group", "list", "--json"}).out)[0].contains(
        "holds_retention"));
    CHECK(run_tributary(admin_url, {"group", "list"}).err.find("cannot tell") == std::string::npos);

    SECTION("the consumer never sees a URL or a header, and writes nothing outside the API") {
        CHECK(denied(consumer_url, "SELECT url FROM tributary.sources"));
        CHECK(denied(consumer_url, "SELECT headers FROM tributary.sources"));
        CHECK(denied(consumer_url, "SELECT * FROM tributary.sources"));
        CHECK(denied(consumer_url, "UPDATE tributary.sources SET enabled = false"));
        CHECK(denied(consumer_url, "SELECT * FROM tributary.events"));
        CHECK(denied(consumer_url, "UPDATE tributary.consumer_groups SET cursor_seq = 0"));
        CHECK(denied(consumer_url, "SELECT tributary.group_create('mine')"));
        CHECK(denied(consumer_url, "SELECT tributary.loader_claim(1, 1, 1000)"));
        CHECK(denied(consumer_url, "SELECT * FROM tributary.access_tokens"));
        run_tributary(consumer_url, {"source", "list"}, 1);
        run_tributary(consumer_url, {"status"}, 1);
    }
    SECTION("the loader creates no group and touches no consumer state") {
        CHECK(denied(loader_url, "SELECT tributary.group_create('mine')"));
        CHECK(denied(loader_url, "SELECT * FROM tributary.consumer_read('g', 'x')"));
        CHECK(denied(loader_url, "SELECT * FROM tributary.consumer_groups"));
        CHECK_FALSE(denied(loader_url, "SELECT * FROM tributary.access_tokens"));
        CHECK(denied(loader_url, "DELETE FROM tributary.sources"));
        CHECK(denied(loader_url, "INSERT INTO tributary.sources (name, url) VALUES ('x', 'http://x')"));
        run_tributary(loader_url, {"group", "create", "mine"}, 1);
    }
    SECTION("the admin runs no loader turn and reads no batch") {
        CHECK(denied(admin_url, "SELECT tributary.loader_claim(1, 1, 1000)"));
        CHECK(denied(admin_url, "SELECT * FROM tributary.consumer_read('g', 'x')"));
        // OAuth2 tokens are the loader's alone: the admin holds only the variables' names.
        CHECK(denied(admin_url, "SELECT * FROM tributary.access_tokens"));
        CHECK(denied(admin_url,
                     "INSERT INTO tributary.events (source_id, event_id, payload)"
                     " VALUES (1, 999, '{}')"));
    }
    SECTION("grant --revoke takes the membership away") {
        run_tributary(db.url(), {"grant", "--revoke", "consumer", consumer.name()});
        CHECK(denied(consumer_url, "SELECT * FROM tributary.read_log('>', NULL, NULL, 10)"));
    }
}

TEST_CASE("grant refuses an unknown role name, and a user that does not exist", "[roles]") {
    TestDatabase db;
    CHECK_THAT(run_tributary(db.url(), {"grant", "janitor", "someone"}, 2).err, Catch::Contains("loader, consumer"));
    CHECK_THAT(run_tributary(db.url(), {"grant", "loader", "no_such_user_here"}, 1).err,
               Catch::Contains("no_such_user_here does not exist"));
}

TEST_CASE("a migrating owner without CREATEROLE migrates, and grants to the roles that exist", "[roles]") {
    TestDatabase migrated;  // the group roles exist in the cluster
    TestDatabase empty(false);
    LoginRole owner(empty, "owner");
    empty.exec("GRANT CREATE ON DATABASE " + empty.scalar("SELECT current_database()") + " TO " + owner.name());
    const auto owner_url = as_user(empty.url(), owner.name());
    postgres::Migrator(owner_url).migrate();
    CHECK_NOTHROW(postgres::Migrator(owner_url).require_current());
    CHECK(empty.scalar("SELECT has_function_privilege('tributary_consumer',"
                       " 'tributary.consumer_read(text, text, int)', 'EXECUTE')") == "t");
    CHECK(empty.scalar("SELECT pg_get_userbyid(p.proowner) FROM pg_proc p WHERE p.proname = 'consumer_read'") ==
          owner.name());
}

TEST_CASE("migrate grants again when the group roles changed since the definitions were applied", "[roles]") {
    TestDatabase db;
    CHECK(db.scalar("SELECT roles FROM tributary.schema_definitions") ==
          "tributary_admin,tributary_console,tributary_consumer,tributary_loader,tributary_maintainer,"
          "tributary_publisher,tributary_receiver");
    CHECK(postgres::Migrator(db.url()).migrate().empty());
    // As if the roles had been created by hand after a migrate without CREATEROLE.
    db.exec("UPDATE tributary.schema_definitions SET roles = ''");
    db.exec("REVOKE ALL ON ALL FUNCTIONS IN SCHEMA tributary FROM tributary_consumer");
    const auto applied = postgres::Migrator(db.url()).migrate();
    // The privileges come last (20_roles.sql and the files after it).
    CHECK_THAT(applied.back(), Catch::StartsWith("privileges/"));
    CHECK(std::count(applied.begin(), applied.end(), "privileges/20_roles.sql") == 1);
    CHECK(db.scalar("SELECT has_function_privilege('tributary_consumer',"
                    " 'tributary.consumer_read(text, text, int)', 'EXECUTE')") == "t");
}

TEST_CASE("a function a migration creates is not PUBLIC's: migrate applies the privileges after it", "[roles]") {
    TestDatabase db;
    auto migrations = postgres::embedded_migrations();
    migrations.push_back({9000, "9000_creates_a_function.sql",
                          "CREATE FUNCTION tributary.made_by_a_migration() RETURNS int LANGUAGE sql AS 'SELECT 1'",
                          std::string(64, 'a')});
    const auto applied = postgres::Migrator(db.url(), migrations).migrate();
    CHECK(applied.front() == "9000_creates_a_function.sql");
    // The privileges come last (20_roles.sql and the files after it).
    CHECK_THAT(applied.back(), Catch::StartsWith("privileges/"));
    CHECK(std::count(applied.begin(), applied.end(), "privileges/20_roles.sql") == 1);
    CHECK(db.scalar("SELECT has_function_privilege('public', 'tributary.made_by_a_migration()', 'EXECUTE')") == "f");
}

TEST_CASE("a login member of tributary_receiver only receives webhooks, and reads no secret nor event", "[roles]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "hooks", "--push", "--insecure-no-auth"});
    run_tributary(db.url(),
                  {"source", "add", "pulled", "--url", "http://127.0.0.1:9/x", "--header", "Authorization: Bearer s3"});
    LoginRole receiver(db, "receiver");
    run_tributary(db.url(), {"grant", "receiver", receiver.name()});
    const auto url = as_user(db.url(), receiver.name());

    ChildProcess process(tributary_args(url, {"receive", "--listen", "127.0.0.1:0"}));
    const int port = std::stoi(wait_for_log(process, R"(receiving webhooks on \S+ \(port (\d+)\))"));
    httplib::Client client("127.0.0.1", port);
    const auto stored = client.Post("/sources/hooks/events", R"({"id": 1})", "application/json");
    REQUIRE(stored);
    CHECK(stored->status == 201);
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "1");

    CHECK(denied(url, "SELECT url FROM tributary.sources"));
    CHECK(denied(url, "SELECT headers FROM tributary.sources"));
    CHECK(denied(url, "SELECT count(*) FROM tributary.events"));
    CHECK(denied(url, "INSERT INTO tributary.events (source_id, event_key, payload) VALUES (1, 'x', '{}')"));
    CHECK(denied(url, "SELECT * FROM tributary.consumer_read('g', 'c')"));
    CHECK(denied(url, "SELECT tributary.loader_claim(1, 1, 1000)"));
    // receiver_store itself stores nothing for a source that is not pushed.
    CHECK(db.scalar("SELECT id FROM tributary.sources WHERE name = 'pulled'") == "2");
    pqxx::connection c(url);
    pqxx::work tx(c);
    CHECK(tx.exec1("SELECT stored FROM tributary.receiver_store('{1}', '{2}', '{k}', '[{}]')")[0].is_null());
    tx.commit();
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "1");
}
