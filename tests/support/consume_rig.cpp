#include "support/consume_rig.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <unistd.h>
#include <pqxx/pqxx>

#include "support/tributary_cli.h"

namespace tributary::testing {

ConsumeRig::ConsumeRig() {
    static int counter = 0;
    dir_ = "/tmp/tributary-consume-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    if (std::system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str()) != 0)
        throw std::runtime_error("cannot create " + dir_);
}

ConsumeRig::~ConsumeRig() { (void)std::system(("rm -rf " + dir_).c_str()); }

void ConsumeRig::add_sources(const std::vector<std::string>& names) {
    for (const auto& name : names)
        db_.exec("INSERT INTO tributary.sources (name, url) VALUES ('" + name + "', 'http://127.0.0.1:1/')");
}

void ConsumeRig::add_events(const std::string& source, int count, const std::vector<int>& poison) {
    std::string poison_list = "{";
    for (std::size_t i = 0; i < poison.size(); ++i) poison_list += (i ? "," : "") + std::to_string(poison[i]);
    poison_list += "}";
    db_.exec(
        "INSERT INTO tributary.events (source_id, event_id, payload) "
        "SELECT s.id, last.id + g, jsonb_build_object('n', last.id + g, 'source', s.name, "
        "         'big', 123456789012345678901234567890) "
        "       || CASE WHEN (last.id + g) = ANY ('" +
        poison_list +
        "'::int[]) "
        "               THEN '{\"poison\": true}'::jsonb ELSE '{}'::jsonb END "
        "  FROM tributary.sources s, "
        "       LATERAL (SELECT coalesce(max(event_id), 0) AS id FROM tributary.events e WHERE e.source_id = s.id) "
        "last, "
        "       generate_series(1, " +
        std::to_string(count) +
        ") g "
        " WHERE s.name = '" +
        source + "'");
}

void ConsumeRig::add_keyed_source(const std::string& name) {
    run_tributary(url(), {"source", "add", name, "--url", "http://127.0.0.1:1/" + name, "--paginate", "after-key",
                          "--records", "/data", "--key", "/key"});
}

void ConsumeRig::add_keyed_events(const std::string& source, const std::vector<std::string>& keys,
                                  const std::vector<std::string>& poison) {
    pqxx::connection c(db_.url());
    pqxx::work tx(c);
    for (const auto& key : keys) {
        const bool poisoned = std::find(poison.begin(), poison.end(), key) != poison.end();
        tx.exec_params(
            "INSERT INTO tributary.events (source_id, event_key, payload) "
            "SELECT s.id, $2, jsonb_build_object('key', $2::text, 'source', s.name)"
            "                 || CASE WHEN $3 THEN '{\"poison\": true}'::jsonb ELSE '{}'::jsonb END "
            "  FROM tributary.sources s WHERE s.name = $1",
            source, key, poisoned);
    }
    tx.commit();
}

std::vector<std::int64_t> ConsumeRig::seqs(const std::string& source_like) const {
    pqxx::connection c(db_.url());
    pqxx::nontransaction tx(c);
    std::vector<std::int64_t> out;
    for (const auto& row : tx.exec_params("SELECT e.seq FROM tributary.events e JOIN tributary.sources s "
                                          "ON s.id = e.source_id WHERE s.name LIKE $1 ORDER BY e.seq",
                                          source_like))
        out.push_back(row[0].as<std::int64_t>());
    return out;
}

std::string ConsumeRig::read(const std::string& name) const {
    std::ifstream in(path(name));
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

std::vector<nlohmann::json> ConsumeRig::lines(const std::string& name) const {
    std::vector<nlohmann::json> out;
    const auto text = read(name);
    std::size_t start = 0;
    for (auto end = text.find('\n'); end != std::string::npos; start = end + 1, end = text.find('\n', start))
        out.push_back(nlohmann::json::parse(text.substr(start, end - start)));
    return out;
}

std::map<std::int64_t, int> ConsumeRig::seq_counts(const std::string& name) const {
    std::map<std::int64_t, int> counts;
    for (const auto& line : lines(name)) ++counts[line.at("seq").get<std::int64_t>()];
    return counts;
}

nlohmann::json ConsumeRig::group(const std::string& name) const {
    for (auto& row : nlohmann::json::parse(run_tributary(url(), {"group", "list", "--json"}).out))
        if (row["name"] == name) return row;
    throw std::runtime_error("no group " + name + " in `group list`");
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline) return done();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
}

}  // namespace tributary::testing
