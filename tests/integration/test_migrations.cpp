#include <catch2/catch.hpp>

#include <thread>

#include "postgres/migrator.h"
#include "support/test_database.h"

using namespace tributary;
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
