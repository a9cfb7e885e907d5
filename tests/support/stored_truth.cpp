#include "support/stored_truth.h"

#include <catch2/catch.hpp>

#include <pqxx/pqxx>

namespace tributary::testing {

namespace {

std::string key_part(const nlohmann::json& part) { return part.is_string() ? part.get<std::string>() : part.dump(); }

/// A JSON pointer as the text[] path of PostgreSQL's #> operator ("" = the whole value).
std::string pg_path(const std::string& pointer) {
    std::vector<std::string> tokens;
    for (nlohmann::json::json_pointer p(pointer); !p.empty(); p.pop_back()) tokens.insert(tokens.begin(), p.back());
    std::string text = "{";
    for (std::size_t i = 0; i < tokens.size(); ++i) text += (i ? "," : "") + nlohmann::json(tokens[i]).dump();
    return text + "}";
}

}  // namespace

std::string stored_key_text(const nlohmann::json& record, const std::vector<std::string>& key_pointers) {
    if (key_pointers.size() == 1) return key_part(record.at(nlohmann::json::json_pointer(key_pointers[0])));
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& pointer : key_pointers) parts.push_back(record.at(nlohmann::json::json_pointer(pointer)));
    return parts.dump();
}

TruthComparison compare_with_truth(const TestDatabase& db, const SourceServer& server, const std::string& name,
                                   const std::string& server_source, const std::string& style,
                                   const RecordShape& shape) {
    // Tributary's own protocol (style "") is keyed by its integer id, kept in event_id.
    const auto truth_text =
        style.empty() ? server.truth(server_source).dump() : server.truth_text(server_source, style);
    const auto truth = nlohmann::json::parse(truth_text);
    nlohmann::json keys = nlohmann::json::array();
    for (const auto& record : truth) keys.push_back(stored_key_text(record, shape.keys));

    pqxx::connection c(db.url());
    pqxx::nontransaction tx(c);
    TruthComparison result;
    result.truth = static_cast<long long>(truth.size());
    const auto counts = tx.exec_params1(
        "SELECT count(*), count(DISTINCT coalesce(e.event_key, e.event_id::text)) FROM tributary.events e JOIN "
        "tributary.sources s ON s.id = "
        "e.source_id WHERE s.name = $1",
        name);
    result.stored = counts[0].as<long long>();
    result.distinct_keys = counts[1].as<long long>();
    // The truth's records are parsed by PostgreSQL, from the server's own text.
    result.matching =
        tx.exec_params1(
              "SELECT count(*) FROM ROWS FROM (jsonb_array_elements($2::jsonb), "
              "jsonb_array_elements_text($3::jsonb)) AS t(record, key)"
              " JOIN tributary.sources s ON s.name = $1"
              " JOIN tributary.events e ON e.source_id = s.id AND coalesce(e.event_key, e.event_id::text) = t.key"
              " WHERE e.payload = t.record #> $4::text[]",
              name, truth_text, keys.dump(), pg_path(shape.payload))[0]
            .as<long long>();
    return result;
}

void check_stored_exactly_once(const TestDatabase& db, const SourceServer& server, const std::string& name,
                               const std::string& server_source, const std::string& style, const RecordShape& shape) {
    const auto r = compare_with_truth(db, server, name, server_source, style, shape);
    INFO("source " << name << " (" << style << "): truth " << r.truth << ", stored " << r.stored << ", distinct keys "
                   << r.distinct_keys << ", matching " << r.matching);
    CHECK(r.truth > 0);
    CHECK(r.stored == r.truth);
    CHECK(r.distinct_keys == r.stored);
    CHECK(r.matching == r.truth);
}

}  // namespace tributary::testing
