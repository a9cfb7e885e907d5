#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <pqxx/pqxx>

#include "core/group_log.h"
#include "postgres/migrator.h"
#include "postgres/postgres_group_log.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary;
using tributary::testing::run_tributary;
using tributary::testing::TestDatabase;

namespace {

/// A fingerprint of everything in schema tributary: relations, columns and
/// the migrations recorded.
std::string schema_fingerprint(const TestDatabase& db) {
    return db.scalar(
        "SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ',' ORDER BY table_name, column_name)"
        " || '|' || (SELECT string_agg(version::text || name, ',' ORDER BY version) FROM tributary.schema_migrations)"
        " FROM information_schema.columns WHERE table_schema = 'tributary'");
}

/// The sql/ definitions as the last release before 0008 shipped them
/// (tests/fixtures/definitions-0007), in the order `migrate` applies them.
std::vector<postgres::SqlFile> definitions_at_0007() {
    const std::filesystem::path base = TRIBUTARY_SOURCE_DIR "/tests/fixtures/definitions-0007";
    std::vector<postgres::SqlFile> files;
    for (const char* part : {"internal", "api", "privileges"}) {
        std::vector<std::filesystem::path> paths;
        for (const auto& entry : std::filesystem::directory_iterator(base / part))
            if (entry.path().extension() == ".sql") paths.push_back(entry.path());
        std::sort(paths.begin(), paths.end());
        for (const auto& path : paths) {
            std::ifstream in(path);
            std::stringstream text;
            text << in.rdbuf();
            const auto name = path.filename().string();
            files.push_back({std::stoi(name), std::string(part) + "/" + name, text.str(), ""});
        }
    }
    return files;
}

/// consumer_read's rows for group g as `columns` (one text expression)
/// make them; waits up to 10 s for some (any transaction open on the
/// cluster holds the read watermark back for a moment).
std::vector<std::string> read_rows(pqxx::connection& c, const std::string& columns, int max) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::vector<std::string> out;
    while (out.empty() && std::chrono::steady_clock::now() < deadline) {
        pqxx::nontransaction tx(c);
        for (const auto& row : tx.exec_params("SELECT " + columns + " FROM tributary.consumer_read('g', 'c', $1)", max))
            out.push_back(row[0].as<std::string>());
        if (out.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return out;
}

}  // namespace

TEST_CASE("migrate applies every migration once; a second run changes nothing") {
    TestDatabase db(false);
    postgres::Migrator migrator(db.url());
    const auto first = migrator.migrate();
    CHECK(first.size() == postgres::embedded_migrations().size() + postgres::embedded_definitions().size());
    const auto after_first = schema_fingerprint(db);
    CHECK(after_first.find("events.tx_id:xid8") != std::string::npos);

    CHECK(migrator.migrate().empty());
    CHECK(schema_fingerprint(db) == after_first);
    CHECK_NOTHROW(migrator.require_current());
}

TEST_CASE("concurrent migrate runs queue on the lock and apply each migration once") {
    TestDatabase db(false);
    std::vector<std::vector<std::string>> applied(4);
    std::vector<std::thread> runs;
    for (std::size_t i = 0; i < applied.size(); ++i)
        runs.emplace_back([&, i] { applied[i] = postgres::Migrator(db.url()).migrate(); });
    for (auto& r : runs) r.join();

    std::size_t total = 0;
    for (const auto& a : applied) total += a.size();
    CHECK(total == postgres::embedded_migrations().size() + postgres::embedded_definitions().size());
    CHECK(db.scalar("SELECT count(*) FROM tributary.schema_migrations") ==
          std::to_string(postgres::embedded_migrations().size()));
}

TEST_CASE("a database without the schema is refused with a hint to migrate") {
    TestDatabase db(false);
    try {
        postgres::Migrator(db.url()).require_current();
        FAIL("expected an error");
    } catch (const std::exception& e) {
        CHECK(std::string(e.what()).find("run `tributary migrate`") != std::string::npos);
    }
}

TEST_CASE("a database newer than the binary is refused") {
    TestDatabase db;
    db.exec("INSERT INTO tributary.schema_migrations (version, name) VALUES (9999, '9999_future.sql')");
    CHECK_THROWS_WITH(postgres::Migrator(db.url()).migrate(), Catch::Contains("upgrade tributary"));
}

TEST_CASE("definitions that differ from the binary's are refused, and migrate puts them back") {
    TestDatabase db;
    CHECK_NOTHROW(postgres::Migrator(db.url()).require_current());
    db.exec("UPDATE tributary.schema_definitions SET digest = 'from another build'");
    CHECK_THROWS_WITH(postgres::Migrator(db.url()).require_current(), Catch::Contains("run `tributary migrate`"));

    const auto applied = postgres::Migrator(db.url()).migrate();
    CHECK(applied.size() == postgres::embedded_definitions().size());
    CHECK_NOTHROW(postgres::Migrator(db.url()).require_current());
}

TEST_CASE("migrate records each migration's SHA-256, the embedded file's") {
    TestDatabase db;
    for (const auto& migration : postgres::embedded_migrations()) {
        INFO(migration.name);
        CHECK(db.scalar("SELECT checksum FROM tributary.schema_migrations WHERE version = " +
                        std::to_string(migration.version)) == migration.checksum);
        CHECK(migration.checksum.size() == 64);
    }
    CHECK(db.scalar("SELECT count(*) FROM tributary.schema_migrations WHERE checksum IS NULL") == "0");
}

TEST_CASE("an applied migration whose text changed is refused by migrate, run and the commands") {
    TestDatabase db;
    db.exec("UPDATE tributary.schema_migrations SET checksum = repeat('0', 64) WHERE version = 3");
    CHECK_THROWS_AS(postgres::Migrator(db.url()).migrate(), postgres::MigrationChanged);
    CHECK_THROWS_WITH(postgres::Migrator(db.url()).require_current(postgres::Migrator::Needs::tables),
                      Catch::Contains("migration 0003_idle_polling.sql as applied to this database differs"));

    const auto migrate = run_tributary(db.url(), {"migrate"}, 1);
    CHECK_THAT(migrate.err, Catch::Contains("0003_idle_polling.sql") && Catch::Contains("never changes once applied"));
    const auto run = run_tributary(db.url(), {"run", "--until-idle"}, 1);
    CHECK_THAT(run.err, Catch::Contains("0003_idle_polling.sql"));
    // Nothing was recorded over the mismatch.
    CHECK(db.scalar("SELECT checksum FROM tributary.schema_migrations WHERE version = 3") == std::string(64, '0'));
}

TEST_CASE("a database migrated before checksums: accepted, and migrate records them on first sight") {
    TestDatabase db;
    db.exec("ALTER TABLE tributary.schema_migrations DROP COLUMN checksum");
    CHECK_NOTHROW(postgres::Migrator(db.url()).require_current());

    CHECK(postgres::Migrator(db.url()).migrate().empty());
    CHECK(db.scalar("SELECT count(*) FROM tributary.schema_migrations WHERE checksum IS NULL") == "0");
    CHECK(db.scalar("SELECT checksum FROM tributary.schema_migrations WHERE version = 1") ==
          postgres::embedded_migrations().front().checksum);
}

TEST_CASE("a database from a shipped earlier 0001 or 0006 is repaired by 0007") {
    TestDatabase db;
    // As the first texts of 0001 and 0006 left it, migrated by a binary
    // that recorded no checksums and knew no 0007.
    // Their definitions had no view on the gates (tributary.foreign_locks came later).
    db.exec(
        "DROP VIEW tributary.foreign_locks; DELETE FROM tributary.schema_definitions;"
        "ALTER TABLE tributary.gates DROP COLUMN drained, DROP COLUMN backlog, DROP COLUMN lease;"
        "CREATE FUNCTION tributary.loader_append(int, bigint, bigint[], jsonb) RETURNS boolean"
        " LANGUAGE sql AS 'SELECT true';"
        // Later migrations stay applied: 0007 repairs 0001 and 0006 alone.
        "DELETE FROM tributary.schema_migrations WHERE version = 7;"
        "UPDATE tributary.schema_migrations SET checksum = NULL");

    const auto applied = postgres::Migrator(db.url()).migrate();
    CHECK(std::find(applied.begin(), applied.end(), "0007_repair_edited_migrations.sql") != applied.end());
    CHECK(db.scalar("SELECT string_agg(attname, ',' ORDER BY attname) FROM pg_attribute"
                    " WHERE attrelid = 'tributary.gates'::regclass AND attname IN ('drained', 'backlog', 'lease')") ==
          "backlog,drained,lease");
    CHECK(db.scalar("SELECT to_regprocedure('tributary.loader_append(int, bigint, bigint[], jsonb)') IS NULL") == "t");
    CHECK(db.scalar("SELECT count(*) FROM tributary.schema_migrations WHERE checksum IS NULL") == "0");
    CHECK_NOTHROW(postgres::Migrator(db.url()).require_current());
}

TEST_CASE("every function and view in schema tributary is defined in sql/, internals before the API") {
    TestDatabase db;
    std::string definitions;
    for (const auto& file : postgres::embedded_definitions()) definitions += file.sql;
    pqxx::connection c(db.url());
    pqxx::nontransaction tx(c);
    for (const auto& row : tx.exec("SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'tributary'::regnamespace"
                                   " UNION SELECT c.relname FROM pg_class c"
                                   " WHERE c.relnamespace = 'tributary'::regnamespace AND c.relkind = 'v'")) {
        const auto name = row[0].as<std::string>();
        INFO(name);
        CHECK((definitions.find("FUNCTION tributary." + name + "(") != std::string::npos ||
               definitions.find("VIEW tributary." + name + " ") != std::string::npos));
    }
    std::vector<std::string> parts;
    for (const auto& file : postgres::embedded_definitions()) parts.push_back(file.name.substr(0, file.name.find('/')));
    CHECK(std::is_sorted(parts.begin(), parts.end(), [](const std::string& a, const std::string& b) {
        auto rank = [](const std::string& p) { return p == "internal" ? 0 : p == "api" ? 1 : 2; };
        return rank(a) < rank(b);
    }));
}

TEST_CASE("run needs the loader's functions, not the definitions' digest: a definition change never stops it") {
    TestDatabase db;
    db.exec("UPDATE tributary.schema_definitions SET digest = 'from a newer build'");
    run_tributary(db.url(), {"run", "--until-idle"}, 0);

    db.exec("DROP FUNCTION tributary.loader_claim(int, int, bigint, bigint) CASCADE");
    const auto run = run_tributary(db.url(), {"run", "--until-idle"}, 1);
    CHECK_THAT(run.err, Catch::Contains("tributary.loader_claim(int, int, bigint, bigint)") &&
                            Catch::Contains("run `tributary migrate`"));
    CHECK(!postgres::Migrator(db.url()).migrate().empty());
    run_tributary(db.url(), {"run", "--until-idle"}, 0);
}

TEST_CASE("a database at 0007 with data migrates to 0008: after-id events read as before, with their key as text") {
    TestDatabase db(false);
    const auto& all = postgres::embedded_migrations();
    REQUIRE(all.size() >= 8);
    REQUIRE(all[6].name == "0007_repair_edited_migrations.sql");
    const std::vector<postgres::SqlFile> migrations_at_0007(all.begin(), all.begin() + 7);
    const auto definitions = definitions_at_0007();
    REQUIRE(definitions.size() == 19);
    postgres::Migrator(db.url(), migrations_at_0007, definitions, "the definitions of 0007 (test fixture)").migrate();
    REQUIRE(db.scalar("SELECT max(version) FROM tributary.schema_migrations") == "7");

    // Data as a 0007 installation holds it: events, a group with a batch in
    // flight across the upgrade, a retry waiting and a dead letter.
    db.exec("INSERT INTO tributary.sources (name, url) VALUES ('orders.eu', 'http://127.0.0.1:9/')");
    db.exec(
        "INSERT INTO tributary.events (source_id, event_id, payload)"
        " SELECT id, i, jsonb_build_object('n', i) FROM tributary.sources, generate_series(1, 6) i");
    db.exec("SELECT tributary.group_create('g', '>', 'beginning', p_max_deliveries => 1)");
    db.exec("UPDATE tributary.consumer_groups SET retry_base = '0'");
    pqxx::connection c(db.url());
    const std::string old_columns = "seq || ' ' || source || ' ' || event_id";
    // The dead letter: event 1, failed alone at max_deliveries.
    CHECK(read_rows(c, old_columns, 1) == std::vector<std::string>{"1 orders.eu 1"});
    db.exec("SELECT tributary.consumer_fail(id, lease_token, 'poison') FROM tributary.consumer_batches");
    // A retry: events 2 and 3, failed together, each waits to come back alone.
    CHECK(read_rows(c, old_columns, 2) == std::vector<std::string>{"2 orders.eu 2", "3 orders.eu 3"});
    db.exec("SELECT tributary.consumer_fail(id, lease_token, 'later') FROM tributary.consumer_batches");
    db.exec("UPDATE tributary.consumer_retries SET next_attempt_at = now() + interval '1 hour' WHERE seq = 3");
    // In flight: event 2 (the retry due now).
    CHECK(read_rows(c, old_columns, 1) == std::vector<std::string>{"2 orders.eu 2"});
    const auto in_flight = db.scalar("SELECT id || ' ' || lease_token FROM tributary.consumer_batches");

    // The shapes of 0007: no event_key, so the upgrade must replace them.
    CHECK(db.scalar("SELECT 'event_key' = ANY (proargnames) FROM pg_proc"
                    " WHERE oid = 'tributary.consumer_read(text, text, int)'::regprocedure") == "f");

    const auto applied = postgres::Migrator(db.url()).migrate();
    CHECK(std::find(applied.begin(), applied.end(), "0008_source_keys.sql") != applied.end());
    CHECK_NOTHROW(postgres::Migrator(db.url()).require_current());
    for (const auto* function :
         {"tributary.consumer_read(text, text, int)", "tributary.read_log(text, xid8, bigint, int)",
          "tributary.batch_events(tributary.consumer_batches)",
          "tributary.read_fresh(tributary.consumer_groups, text, int)"}) {
        INFO(function);
        CHECK(
            db.scalar(std::string("SELECT 'event_key' = ANY (proargnames) FROM pg_proc WHERE oid = to_regprocedure('") +
                      function + "')") == "t");
    }
    if (db.scalar("SELECT to_regrole('tributary_consumer') IS NOT NULL") == "t")
        CHECK(db.scalar("SELECT has_function_privilege('tributary_consumer', "
                        "'tributary.consumer_read(text, text, int)', 'EXECUTE')") == "t");

    // The batch leased before the upgrade is acked with its token.
    CHECK(db.scalar("SELECT tributary.consumer_ack(" + in_flight.substr(0, in_flight.find(' ')) + ", '" +
                    in_flight.substr(in_flight.find(' ') + 1) + "')") == "t");
    // The rest, by the new shape: event_id as before, event_key its text.
    const std::string new_columns = old_columns + " || ' ' || event_key";
    CHECK(read_rows(c, new_columns, 10) ==
          std::vector<std::string>{"4 orders.eu 4 4", "5 orders.eu 5 5", "6 orders.eu 6 6"});
    db.exec("SELECT tributary.consumer_ack(id, lease_token) FROM tributary.consumer_batches");
    db.exec("UPDATE tributary.consumer_retries SET next_attempt_at = now()");
    CHECK(read_rows(c, new_columns, 10) == std::vector<std::string>{"3 orders.eu 3 3"});
    CHECK(db.scalar(
              "SELECT seq || ' ' || event_id || ' ' || event_key || ' ' || last_error FROM tributary.dead_letters") ==
          "1 1 1 poison");
    CHECK(db.scalar("SELECT string_agg(event_key, ',' ORDER BY seq) FROM tributary.read_log('>', NULL, NULL)") ==
          "1,2,3,4,5,6");
    // And through the consumer's own adapter, as `consume` reads.
    db.exec("SELECT tributary.group_create('h', '>', 'beginning')");
    const auto log = postgres::open_group_log(db.url(), "h");
    auto batch = log->read("c", 10);
    for (int tries = 0; !batch && tries < 500; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        batch = log->read("c", 10);
    }
    REQUIRE(batch);
    REQUIRE(batch->events.size() == 6);
    CHECK(batch->events[0].event_id == 1);
    CHECK(batch->events[0].event_key == "1");
}
