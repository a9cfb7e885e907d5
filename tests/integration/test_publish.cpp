// Publishing from SQL (issue 15): tributary.publish in the application's own
// transaction stores an event if and only if that transaction commits, once
// per key; consumers read published events like any other and are woken by
// the commit's hint; only the login roles a source names may publish to it,
// and a source being published to cannot be removed from under it.

#include <catch2/catch.hpp>

#include <csignal>
#include <future>
#include <thread>

#include <pqxx/pqxx>

#include "support/consume_rig.h"
#include "support/login_role.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

/// What a statement failed with: its SQLSTATE and message ("" and "" when it
/// succeeded). Safe to call on a worker thread: it asserts nothing.
struct Failure {
    std::string sqlstate;
    std::string message;
};

Failure failure_of(const std::function<void()>& run) {
    try {
        run();
        return {};
    } catch (const pqxx::insufficient_privilege& e) {
        return {"42501", e.what()};  // libpqxx 6.4 leaves sqlstate() empty for this class
    } catch (const pqxx::serialization_failure& e) {
        return {"40001", e.what()};  // not an sql_error in libpqxx 6.4
    } catch (const pqxx::sql_error& e) {
        return {e.sqlstate(), e.what()};
    }
}

/// Runs `sql` on its own connection to `url` (autocommit).
Failure failure_of(const std::string& url, const std::string& sql) {
    return failure_of([&] {
        pqxx::connection c(url);
        pqxx::nontransaction tx(c);
        tx.exec(sql);
    });
}

std::string publish_one(const std::string& source, const std::string& key, const std::string& payload = "{}") {
    return "SELECT tributary.publish('" + source + "', '" + key + "', '" + payload + "')";
}

/// Whether backend `pid` is waiting for a lock (a row's, a transaction's, an advisory one).
bool waits_for_lock(const TestDatabase& db, int pid) {
    return db.scalar("SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(pid) +
                     " AND wait_event_type = 'Lock'") == "1";
}

/// Whether some session of this test's database waits for a lock.
bool some_session_waits_for_lock(const TestDatabase& db) {
    return db.scalar(
               "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
               " AND wait_event_type = 'Lock'") != "0";
}

std::string count_events(const TestDatabase& db, const std::string& source) {
    return db.scalar(
        "SELECT count(*) FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id"
        " WHERE s.name = '" +
        source + "'");
}

}  // namespace

TEST_CASE("publish stores an event only if its transaction commits, and a key once", "[publish]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "pub.orders", "--published"});
    pqxx::connection app(db.url());

    {
        pqxx::work tx(app);
        CHECK(tx.exec1(publish_one("pub.orders", "o-1", R"({"total": 10})"))[0].as<bool>());
        tx.abort();
    }
    CHECK(count_events(db, "pub.orders") == "0");

    {
        pqxx::work tx(app);
        CHECK(tx.exec1(publish_one("pub.orders", "o-1", R"({"total": 10})"))[0].as<bool>());
        tx.commit();
    }
    CHECK(count_events(db, "pub.orders") == "1");

    // Again, from another transaction: nothing, and the first payload stays.
    {
        pqxx::work tx(app);
        CHECK_FALSE(tx.exec1(publish_one("pub.orders", "o-1", R"({"total": 99})"))[0].as<bool>());
        tx.commit();
    }
    // Twice in one transaction: the second stores nothing.
    {
        pqxx::work tx(app);
        CHECK(tx.exec1(publish_one("pub.orders", "o-2"))[0].as<bool>());
        CHECK_FALSE(tx.exec1(publish_one("pub.orders", "o-2"))[0].as<bool>());
        tx.commit();
    }
    CHECK(db.scalar("SELECT string_agg(event_key || '=' || payload::text, ',' ORDER BY seq) FROM tributary.events") ==
          R"(o-1={"total": 10},o-2={})");
    // Published events are keyed by text, like a pulled source keyed by text.
    CHECK(db.scalar("SELECT count(*) FROM tributary.events WHERE event_id IS NULL") == "2");

    // Keys and payloads it cannot store (22023).
    CHECK(failure_of(db.url(), publish_one("pub.orders", "")).sqlstate == "22023");
    CHECK(failure_of(db.url(), publish_one("pub.orders", std::string(1025, 'k'))).sqlstate == "22023");
    CHECK(failure_of(db.url(), publish_one("pub.orders", std::string(1024, 'k'))).sqlstate.empty());
    CHECK(failure_of(db.url(), "SELECT tributary.publish('pub.orders', NULL, '{}')").sqlstate == "22023");
    CHECK(failure_of(db.url(), "SELECT tributary.publish('pub.orders', 'k', NULL)").sqlstate == "22023");
}

TEST_CASE("two transactions publishing one key: the second waits for the first, then stores or not", "[publish]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "pub.orders", "--published"});
    pqxx::connection first(db.url()), second(db.url());
    const int second_pid = second.backendpid();

    pqxx::work tx(first);
    CHECK(tx.exec1(publish_one("pub.orders", "o-1", R"({"by": "first"})"))[0].as<bool>());
    // The second waits on the unique index for the first to end.
    auto published = std::async(std::launch::async, [&] {
        pqxx::work tx2(second);
        const bool stored = tx2.exec1(publish_one("pub.orders", "o-1", R"({"by": "second"})"))[0].as<bool>();
        tx2.commit();
        return stored;
    });
    REQUIRE(wait_until([&] { return waits_for_lock(db, second_pid); }, 20s));

    SECTION("the first commits: the second stores nothing") {
        tx.commit();
        CHECK_FALSE(published.get());
        CHECK(db.scalar("SELECT string_agg(payload->>'by', ',') FROM tributary.events") == "first");
    }
    SECTION("the first rolls back: the second stores") {
        tx.abort();
        CHECK(published.get());
        CHECK(db.scalar("SELECT string_agg(payload->>'by', ',') FROM tributary.events") == "second");
    }
}

TEST_CASE("publish many: array order, a key once, all or nothing", "[publish]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "pub.orders", "--published"});
    CHECK(db.scalar(publish_one("pub.orders", "b")) == "t");

    CHECK(db.scalar(R"(SELECT tributary.publish('pub.orders', '[
            {"key": "c", "payload": {"n": 1}},
            {"key": "a", "payload": {"n": 2}},
            {"key": "b", "payload": {"n": 3}},
            {"key": "c", "payload": {"n": 4}},
            {"key": "d", "payload": null}]'))") == "3");
    // In array order (seq); "b" was stored before; the second "c" stored nothing; a JSON null is a payload.
    CHECK(db.scalar("SELECT string_agg(event_key || '=' || payload::text, ',' ORDER BY seq) FROM tributary.events") ==
          R"(b={},c={"n": 1},a={"n": 2},d=null)");

    CHECK(db.scalar("SELECT tributary.publish('pub.orders', '[]')") == "0");
    // The same keys again, in another transaction: nothing.
    CHECK(
        db.scalar(
            R"(SELECT tributary.publish('pub.orders', '[{"key": "a", "payload": 0}, {"key": "d", "payload": 0}]'))") ==
        "0");
    for (const auto* bad : {R"('[{"key": "e", "payload": 1}, {"key": "f"}]')",               // no payload
                            R"('[{"key": "e", "payload": 1}, {"key": 7, "payload": 1}]')",   // key not a string
                            R"('[{"key": "e", "payload": 1}, {"key": "", "payload": 1}]')",  // empty key
                            R"('[{"key": "e", "payload": 1}, "f"]')",                        // not an object
                            R"('{"key": "e", "payload": 1}')",                               // not an array
                            "NULL"}) {
        INFO(bad);
        const auto failed =
            failure_of(db.url(), std::string("SELECT tributary.publish('pub.orders', ") + bad + "::jsonb)");
        CHECK(failed.sqlstate == "22023");
    }
    CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "4");  // no "e": all or nothing
}

TEST_CASE("a consumer group reads published events, woken by the herald's hint", "[publish]") {
    ConsumeRig rig;
    run_tributary(rig.url(), {"source", "add", "pub.orders", "--published"});
    run_tributary(rig.url(), {"group", "create", "g", "--pattern", "pub.>", "--from", "beginning"});
    // Its fallback poll is an hour: within this test only a hint (from the
    // herald it runs itself, as `consume` competes for the herald's lease;
    // or a reconnect of its hint connection, which nothing here causes) wakes it.
    ChildProcess consumer(
        tributary_args(rig.url(), {"consume", "g", "--idle-poll", "1h", "--exec", "cat >> " + rig.path("out")}));
    REQUIRE(wait_until(
        [&] {
            return rig.db().scalar(
                       "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND query LIKE 'LISTEN%'") != "0";
        },
        20s));
    const auto publish_and_wait = [&](const std::string& key, std::size_t lines) {
        pqxx::connection app(rig.url());
        pqxx::work tx(app);
        tx.exec(publish_one("pub.orders", key, R"({"order": ")" + key + R"("})"));
        tx.commit();
        return wait_until([&] { return rig.lines("out").size() == lines; }, 60s);
    };
    REQUIRE(publish_and_wait("o-1", 1));
    // Acked: the consumer's next read (ack and read in one statement) found
    // nothing; o-2 commits after that read. And no read since, for 500 ms:
    // a wake-up still pending from o-1's hint or the listener's connect
    // would have read again at once, and might have found o-2 by itself.
    REQUIRE(wait_until(
        [&] { return rig.group("g").at("events_behind") == 0 && rig.group("g").at("batches_in_flight") == 0; }, 20s));
    const auto last_read = [&] {
        return rig.db().scalar(
            "SELECT max(state_change) FROM pg_stat_activity WHERE datname = current_database()"
            " AND state = 'idle' AND query LIKE '%consumer_next%'");
    };
    REQUIRE(wait_until(
        [&] {
            const auto before = last_read();
            std::this_thread::sleep_for(500ms);
            return before != "NULL" && last_read() == before;
        },
        20s));
    REQUIRE(publish_and_wait("o-2", 2));

    consumer.signal(SIGTERM);
    CHECK(consumer.wait_for(15s) == 0);
    const auto lines = rig.lines("out");
    REQUIRE(lines.size() == 2);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto key = "o-" + std::to_string(i + 1);
        CHECK(lines[i].at("source") == "pub.orders");
        CHECK(lines[i].at("event_key") == key);
        CHECK(lines[i].at("payload").at("order") == key);
    }
}

TEST_CASE("publish: only the login roles a source names, and nothing else", "[publish]") {
    TestDatabase db;
    LoginRole app(db, "app"), other(db, "other"), orders_writers(db, "orders_writers");
    run_tributary(db.url(), {"source", "add", "pub.orders", "--published", "--publisher", orders_writers.name()});
    run_tributary(db.url(), {"grant", "publisher", app.name()});
    run_tributary(db.url(), {"grant", "publisher", other.name()});
    db.exec("GRANT " + orders_writers.name() + " TO " + app.name());
    const auto app_url = as_user(db.url(), app.name());
    const auto other_url = as_user(db.url(), other.name());

    CHECK(failure_of(app_url, publish_one("pub.orders", "o-1")).sqlstate.empty());
    CHECK(failure_of(app_url, R"(SELECT tributary.publish('pub.orders', '[{"key": "o-2", "payload": 2}]'))")
              .sqlstate.empty());
    CHECK(count_events(db, "pub.orders") == "2");

    // Not listed, or no such source: the same refusal, so names cannot be probed.
    const auto not_listed = failure_of(other_url, publish_one("pub.orders", "x"));
    const auto unknown = failure_of(other_url, publish_one("pub.nothing", "x"));
    CHECK(not_listed.sqlstate == "42501");
    CHECK(unknown.sqlstate == "42501");
    CHECK_THAT(not_listed.message, Catch::Contains("no published source \"pub.orders\" that " + other.name()));
    CHECK_THAT(unknown.message, Catch::Contains("no published source \"pub.nothing\" that " + other.name()));
    CHECK(failure_of(other_url, R"(SELECT tributary.publish('pub.orders', '[{"key": "x", "payload": 1}]'))").sqlstate ==
          "42501");

    // A publisher reads nothing and calls nothing but publish.
    CHECK(denied(app_url, "SELECT * FROM tributary.events"));
    CHECK(denied(app_url, "SELECT name FROM tributary.sources"));
    CHECK(denied(app_url, "INSERT INTO tributary.events (source_id, event_key, payload) VALUES (1, 'x', '{}')"));
    CHECK(denied(app_url, "SELECT * FROM tributary.consumer_read('g', 'c')"));
    CHECK(denied(app_url, "SELECT * FROM tributary.read_log('>', NULL, NULL, 10)"));
    CHECK(denied(app_url, "SELECT tributary.group_create('mine')"));
    CHECK(denied(app_url, "SELECT tributary.publishing_source('pub.orders')"));
    CHECK(denied(app_url, "SELECT tributary.receiver_store('{1}', '{1}', '{x}', '[{}]')"));

    SECTION("a paused source refuses (55000) until resumed") {
        run_tributary(db.url(), {"source", "pause", "pub.orders"});
        CHECK(failure_of(app_url, publish_one("pub.orders", "o-3")).sqlstate == "55000");
        run_tributary(db.url(), {"source", "resume", "pub.orders"});
        CHECK(failure_of(app_url, publish_one("pub.orders", "o-3")).sqlstate.empty());
    }
    SECTION("only published sources: not a pushed or a pulled one, whoever asks") {
        run_tributary(db.url(), {"source", "add", "pub.hooks", "--push", "--insecure-no-auth"});
        run_tributary(db.url(), {"source", "add", "pub.pulled", "--url", "http://127.0.0.1:9/events"});
        for (const auto* source : {"pub.hooks", "pub.pulled"}) {
            INFO(source);
            CHECK(failure_of(app_url, publish_one(source, "x")).sqlstate == "42501");
            CHECK(failure_of(db.url(), publish_one(source, "x")).sqlstate == "42501");  // even the owner
        }
        CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "2");
    }
    SECTION("the check is on the login role: SET ROLE and SECURITY DEFINER wrappers change nothing") {
        // other may SET ROLE to the roles it is a member of; none is listed.
        CHECK(failure_of([&] {
                  pqxx::connection c(other_url);
                  pqxx::nontransaction tx(c);
                  tx.exec("SET ROLE tributary_publisher");
                  tx.exec(publish_one("pub.orders", "x"));
              }).sqlstate == "42501");
        // Nor may it become a listed role it is not a member of.
        CHECK(failure_of(other_url, "SET ROLE " + orders_writers.name()).sqlstate == "42501");
        // A function that runs as app (a publisher) does not publish for
        // whoever calls it: inside it current_user is app, session_user is not.
        db.exec(
            "CREATE FUNCTION public.publish_for_anyone(k text) RETURNS boolean LANGUAGE sql SECURITY DEFINER"
            " AS $$ SELECT tributary.publish('pub.orders', k, '{}') $$");
        db.exec("ALTER FUNCTION public.publish_for_anyone(text) OWNER TO " + app.name());
        db.exec("GRANT EXECUTE ON FUNCTION public.publish_for_anyone(text) TO " + other.name());
        CHECK(failure_of(other_url, "SELECT public.publish_for_anyone('x')").sqlstate == "42501");
        // And app keeps its right after SET ROLE to a role that may execute publish.
        CHECK(failure_of([&] {
                  pqxx::connection c(app_url);
                  pqxx::nontransaction tx(c);
                  tx.exec("SET ROLE tributary_publisher");
                  tx.exec(publish_one("pub.orders", "o-4"));
              }).sqlstate.empty());
        // But a role without EXECUTE cannot call it at all, whatever its login.
        CHECK(failure_of([&] {
                  pqxx::connection c(app_url);
                  pqxx::nontransaction tx(c);
                  tx.exec("SET ROLE " + orders_writers.name());
                  tx.exec(publish_one("pub.orders", "o-5"));
              }).sqlstate == "42501");
        CHECK(db.scalar("SELECT string_agg(event_key, ',' ORDER BY seq) FROM tributary.events") == "o-1,o-2,o-4");
        db.exec("DROP FUNCTION public.publish_for_anyone(text)");
    }
    SECTION("membership counts through other roles, and for a NOINHERIT login after SET ROLE") {
        LoginRole team(db, "team"), member(db, "member"), strict(db, "strict");
        db.exec("GRANT " + orders_writers.name() + " TO " + team.name());
        db.exec("GRANT " + team.name() + " TO " + member.name());
        run_tributary(db.url(), {"grant", "publisher", member.name()});
        CHECK(failure_of(as_user(db.url(), member.name()), publish_one("pub.orders", "m-1")).sqlstate.empty());
        // A NOINHERIT login holds none of tributary_publisher's privileges
        // until it takes the role; its membership of the publishers counts.
        db.exec("ALTER ROLE " + strict.name() + " NOINHERIT");
        db.exec("GRANT " + orders_writers.name() + " TO " + strict.name());
        run_tributary(db.url(), {"grant", "publisher", strict.name()});
        CHECK(failure_of(as_user(db.url(), strict.name()), publish_one("pub.orders", "s-1")).sqlstate == "42501");
        CHECK(failure_of([&] {
                  pqxx::connection c(as_user(db.url(), strict.name()));
                  pqxx::nontransaction tx(c);
                  tx.exec("SET ROLE tributary_publisher");
                  tx.exec(publish_one("pub.orders", "s-2"));
              }).sqlstate.empty());
        CHECK(db.scalar("SELECT string_agg(event_key, ',' ORDER BY seq) FROM tributary.events") == "o-1,o-2,m-1,s-2");
    }
    SECTION("a listed role that no longer exists lets nobody publish") {
        LoginRole gone(db, "gone");
        run_tributary(db.url(), {"source", "add", "pub.gone", "--published", "--publisher", gone.name()});
        db.exec("DROP ROLE " + gone.name());
        CHECK(failure_of(app_url, publish_one("pub.gone", "x")).sqlstate == "42501");
    }
}

TEST_CASE("a published source with events cannot be removed, even by a remove racing a publish", "[publish]") {
    TestDatabase db;
    run_tributary(db.url(), {"source", "add", "pub.empty", "--published"});
    run_tributary(db.url(), {"source", "add", "pub.orders", "--published"});
    run_tributary(db.url(), {"source", "remove", "pub.empty"});
    CHECK(db.scalar("SELECT count(*) FROM tributary.sources WHERE name = 'pub.empty'") == "0");

    SECTION("with events") {
        CHECK(db.scalar(publish_one("pub.orders", "o-1")) == "t");
        CHECK_THAT(run_tributary(db.url(), {"source", "remove", "pub.orders"}, 1).err,
                   Catch::Contains("stored events"));
    }
    SECTION("a publishing transaction holds the remove off until it ends") {
        pqxx::connection app(db.url());
        pqxx::work tx(app);
        CHECK(tx.exec1(publish_one("pub.orders", "o-1"))[0].as<bool>());
        // A remove that may not wait is refused for the lock.
        CHECK(
            failure_of(db.url(), "SET lock_timeout = '100ms'; DELETE FROM tributary.sources WHERE name = 'pub.orders'")
                .sqlstate == "55P03");
        ChildProcess remove(tributary_args(db.url(), {"source", "remove", "pub.orders"}));
        REQUIRE(wait_until([&] { return some_session_waits_for_lock(db); }, 20s));
        SECTION("it commits: the remove refuses") {
            tx.commit();
            CHECK(remove.wait_for(20s) == 1);
            CHECK_THAT(remove.err(), Catch::Contains("stored events"));
            CHECK(count_events(db, "pub.orders") == "1");
        }
        SECTION("it rolls back: the source is removed") {
            tx.abort();
            CHECK(remove.wait_for(20s) == 0);
            CHECK(db.scalar("SELECT count(*) FROM tributary.sources WHERE name = 'pub.orders'") == "0");
        }
    }
    SECTION("a publish waits for a remove in progress, then finds no source") {
        pqxx::connection admin(db.url()), app(db.url());
        const int app_pid = app.backendpid();
        pqxx::work removing(admin);
        removing.exec("DELETE FROM tributary.sources WHERE name = 'pub.orders'");
        auto published = std::async(std::launch::async, [&] {
            return failure_of([&] {
                pqxx::work tx(app);
                tx.exec(publish_one("pub.orders", "o-1"));
                tx.commit();
            });
        });
        REQUIRE(wait_until([&] { return waits_for_lock(db, app_pid); }, 20s));
        removing.commit();
        CHECK(published.get().sqlstate == "42501");
        CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "0");
    }
    SECTION("in REPEATABLE READ, a source removed after the snapshot is not published to") {
        pqxx::connection app(db.url());
        pqxx::transaction<pqxx::isolation_level::repeatable_read> tx(app);
        tx.exec("SELECT 1");  // the transaction's snapshot: the source is there
        run_tributary(db.url(), {"source", "remove", "pub.orders"});
        CHECK(failure_of([&] { tx.exec(publish_one("pub.orders", "o-1")); }).sqlstate == "40001");
        CHECK(db.scalar("SELECT count(*) FROM tributary.events") == "0");
    }
    SECTION("in REPEATABLE READ the row lock holds the remove off the same way") {
        pqxx::connection app(db.url());
        pqxx::transaction<pqxx::isolation_level::repeatable_read> tx(app);
        CHECK(tx.exec1(publish_one("pub.orders", "o-1"))[0].as<bool>());
        ChildProcess remove(tributary_args(db.url(), {"source", "remove", "pub.orders"}));
        REQUIRE(wait_until([&] { return some_session_waits_for_lock(db); }, 20s));
        tx.commit();
        CHECK(remove.wait_for(20s) == 1);
        CHECK_THAT(remove.err(), Catch::Contains("stored events"));
    }
}
