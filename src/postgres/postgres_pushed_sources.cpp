#include "postgres_pushed_sources.h"

#include "core/errors.h"
#include "postgres/statements.h"
#include "source_receiving.h"
#include "sql_errors.h"
#include "webhook/pushed_events.h"

namespace tributary::postgres {

namespace {

constexpr const char* kList = "tributary_pushed_sources";

namespace sql = statements::pushed_sources;

webhook::PushedSource to_source(const pqxx::row& row) {
    webhook::PushedSource source;
    source.id = row[0].as<int>();
    source.name = row[1].as<std::string>();
    source.enabled = row[2].as<bool>();
    try {
        if (row[3].is_null()) throw std::runtime_error("tributary.sources.receiving is NULL");
        read_receiving_json(row[3].as<std::string>(), source);
    } catch (const std::exception& e) {
        source.misconfigured = e.what();
    }
    return source;
}

}  // namespace

PostgresPushedSources::PostgresPushedSources(PostgresSession& session) : session_(session) {
    session_.prepare(kList, sql::list);
}

std::vector<webhook::PushedSource> PostgresPushedSources::pushed_sources() {
    std::lock_guard<std::mutex> guard(mutex_);
    try {
        const auto rows = session_.run([](pqxx::connection& c) {
            pqxx::read_transaction tx(c);
            return tx.exec_prepared(kList);
        });
        std::vector<webhook::PushedSource> sources;
        sources.reserve(rows.size());
        for (const auto& row : rows) sources.push_back(to_source(row));
        return sources;
    } catch (const DatabaseUnavailable& e) {
        throw webhook::StoreUnavailable(e.what());
    } catch (const pqxx::sql_error& e) {
        throw std::runtime_error("cannot read the pushed sources: " + server_message(e));
    }
}

}  // namespace tributary::postgres
