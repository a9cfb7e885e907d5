#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

#include <pqxx/pqxx>

#include "postgres/migrator.h"
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
        // And none of what the migrations after 0007 create.
        "DROP TABLE tributary.access_tokens;"
        "DELETE FROM tributary.schema_migrations WHERE version >= 7;"
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

    db.exec("DROP FUNCTION tributary.loader_claim(int, int, bigint)");
    const auto run = run_tributary(db.url(), {"run", "--until-idle"}, 1);
    CHECK_THAT(run.err, Catch::Contains("tributary.loader_claim(int, int, bigint)") &&
                            Catch::Contains("run `tributary migrate`"));
    CHECK(!postgres::Migrator(db.url()).migrate().empty());
    run_tributary(db.url(), {"run", "--until-idle"}, 0);
}
