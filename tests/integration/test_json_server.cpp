// Against the real json-server 0.17.4 (npm), an API we did not write that ignores the parameters
// it does not know: `limit`, `offset`, `after_id`. Paged wrongly, it must fail its source with an
// error naming the fix and store nothing of the page; paged as docs/cookbook.md says, it loads
// every record once, and its end of stream stays `ok`. Hidden ([.]): run by the ctest entry
// `integration_json_server` (tests/json-server/run), which installs json-server first.

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "support/child_process.h"
#include "support/cookbook_lines.h"
#include "support/loopback_socket.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

constexpr int kRecords = 250;

/// json-server serving /events, records {"id": 1.., "kind": "order", "n": ...} from a db.json of
/// its own, on 127.0.0.1.
class JsonServer {
public:
    explicit JsonServer(int records) : dir_(make_dir()), port_(free_loopback_port()) {
        const char* bin = std::getenv("TRIBUTARY_JSON_SERVER_BIN");
        if (bin == nullptr || *bin == '\0')
            FAIL("TRIBUTARY_JSON_SERVER_BIN is not set: run `ctest -R integration_json_server`");
        nlohmann::json events = nlohmann::json::array();
        for (int i = 1; i <= records; ++i) events.push_back({{"id", i}, {"kind", "order"}, {"n", i * 7}});
        std::ofstream(dir_ / "db.json") << nlohmann::json{{"events", events}}.dump();
        process_ = std::make_unique<ChildProcess>(std::vector<std::string>{
            bin, "--host", "127.0.0.1", "--port", std::to_string(port_), "--quiet", (dir_ / "db.json").string()});
        wait_until_serving();
    }
    ~JsonServer() {
        process_.reset();
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }
    JsonServer(const JsonServer&) = delete;
    JsonServer& operator=(const JsonServer&) = delete;

    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/events"; }

    /// POSTs records `from`..`to` (json-server appends them to its list).
    void append(int from, int to) const {
        httplib::Client client("127.0.0.1", port_);
        for (int i = from; i <= to; ++i) {
            const auto res = client.Post("/events", nlohmann::json{{"id", i}, {"kind", "order"}, {"n", i * 7}}.dump(),
                                         "application/json");
            REQUIRE(res);
            REQUIRE(res->status == 201);
        }
    }

private:
    static std::filesystem::path make_dir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "tributary-json-server-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        return pattern;
    }

    void wait_until_serving() const {
        httplib::Client client("127.0.0.1", port_);
        for (int attempt = 0; attempt < 300; ++attempt) {
            if (const auto res = client.Get("/events?_limit=1"); res && res->status == 200) return;
            std::this_thread::sleep_for(100ms);
        }
        FAIL("json-server did not answer on port " << port_ << "; its stderr:\n" << process_->err());
    }

    std::filesystem::path dir_;
    int port_;
    std::unique_ptr<ChildProcess> process_;
};

struct Stored {
    long long rows = 0, distinct_ids = 0, low = 0, high = 0;
};

/// What source `name` holds: rows, distinct record ids, and their range.
Stored stored(const TestDatabase& db, const std::string& name) {
    const std::string of =
        " FROM tributary.events e JOIN tributary.sources s ON s.id = e.source_id WHERE s.name = '" + name + "'";
    Stored s;
    s.rows = std::stoll(db.scalar("SELECT count(*)" + of));
    s.distinct_ids = std::stoll(db.scalar("SELECT count(DISTINCT e.payload->>'id')" + of));
    s.low = std::stoll(db.scalar("SELECT coalesce(min((e.payload->>'id')::int), 0)" + of));
    s.high = std::stoll(db.scalar("SELECT coalesce(max((e.payload->>'id')::int), 0)" + of));
    return s;
}

void load_until_idle(const TestDatabase& db) {
    const auto run = run_tributary(db.url(), {"run", "--workers", "3", "--until-idle", "--max-runtime", "60s"});
    INFO("run:\n" << run.err);
}

void add(const TestDatabase& db, const std::string& name, const std::string& url, std::vector<std::string> flags) {
    std::vector<std::string> args{"source", "add", name, "--url", url, "--records", ""};
    args.insert(args.end(), flags.begin(), flags.end());
    run_tributary(db.url(), args);
}

void check_failing(const nlohmann::json& status, const TestDatabase& db, const std::string& name,
                   const std::vector<std::string>& causes, long long rows) {
    const auto& row = status[name];
    INFO(name << ": " << row.dump());
    CHECK(row["state"] == "failing");
    REQUIRE(row["last_error"].is_string());
    for (const auto& cause : causes) CHECK_THAT(row["last_error"].get<std::string>(), Catch::Contains(cause));
    CHECK(stored(db, name).rows == rows);
}

void check_all_once(const nlohmann::json& status, const TestDatabase& db, const std::string& name, int records) {
    const auto& row = status[name];
    INFO(name << ": " << row.dump());
    CHECK(row["state"] == "ok");
    const auto s = stored(db, name);
    CHECK(s.rows == records);
    CHECK(s.distinct_ids == records);
    CHECK(s.low == 1);
    CHECK(s.high == records);
}

/// The cookbook's json-server lines (their --url is json-server's default, localhost:3000), as words.
std::vector<std::vector<std::string>> cookbook_json_server_lines() {
    std::vector<std::vector<std::string>> lines;
    for (const auto& command : cookbook_source_add_commands())
        if (command.find("http://localhost:3000/") != std::string::npos) lines.push_back(shell_words(command));
    return lines;
}

}  // namespace

TEST_CASE("json-server: paged by parameters it ignores, each style fails its source naming the fix",
          "[.][json-server]") {
    TestDatabase db;
    JsonServer api(kRecords);
    // `page` sends page=N and limit=100: json-server knows neither (_page, _limit). With
    // --cursor-param _page it serves pages of its own 10 records, with a Link rel="next" and
    // X-Total-Count: 250; taken as the last page, the source would sit at "+10", ok, forever.
    add(db, "js.page", api.url(), {"--paginate", "page", "--cursor-param", "_page", "--batch-size", "100"});
    // `offset` by _start alone: json-server then slices nothing and serves all 250 records.
    add(db, "js.offset", api.url(), {"--paginate", "offset", "--cursor-param", "_start", "--batch-size", "100"});
    // `offset` with the right limit but a cursor parameter it ignores: the first 100 again and
    // again, while the offset runs on; X-Total-Count tells.
    add(db, "js.offset.param", api.url(), {"--paginate", "offset", "--limit-param", "_limit", "--batch-size", "100"});
    // after-id by id_gte, which is inclusive, without --inclusive: page 2 starts at the cursor.
    add(db, "js.gte", api.url(), {"--cursor-param", "id_gte", "--limit-param", "_limit", "--batch-size", "100"});
    // after-id by a parameter json-server ignores: every page starts at id 1 again.
    add(db, "js.after", api.url(), {"--limit-param", "_limit", "--batch-size", "100"});
    // Today's protocol (no --records) against a bare array of records without "payload".
    run_tributary(db.url(), {"source", "add", "js.protocol", "--url", api.url()});

    load_until_idle(db);
    const auto status = status_by_name(db.url());
    check_failing(status, db, "js.page",
                  {"page 1 holds 10 records, fewer than the 100 asked", "X-Total-Count 250", "Link rel=\"next\"",
                   "--limit-param", "--batch-size 10"},
                  0);
    check_failing(status, db, "js.offset",
                  {"holds 250 records, more than the 100 asked", "the API ignores limit", "--limit-param"}, 0);
    check_failing(status, db, "js.offset.param",
                  {"past the X-Total-Count 250", "the API ignores offset", "--cursor-param"}, 100);
    check_failing(status, db, "js.gte", {"not greater than the cursor 100 (id_gte)", "--inclusive"}, 100);
    check_failing(status, db, "js.after", {"not greater than the cursor 100 (after_id)", "the API may ignore after_id"},
                  100);
    check_failing(status, db, "js.protocol", {"payload is missing", "--records \"\""}, 0);
}

TEST_CASE("json-server: the cookbook's lines load every record once, new ones too, and stay ok at the end",
          "[.][json-server]") {
    TestDatabase db;
    JsonServer api(kRecords);
    const auto lines = cookbook_json_server_lines();
    REQUIRE(lines.size() >= 2);
    std::vector<std::string> names;
    for (auto words : lines) {
        for (auto& word : words)
            if (word.rfind("http://localhost:3000/events", 0) == 0) word = api.url();
        words.erase(words.begin());  // "tributary": the binary under test instead
        run_tributary(db.url(), words);
        names.push_back(words[2]);
    }
    // And what the cookbook only mentions: after-key by id_gte, after-id with a batch size that
    // ends the list in the middle of a page, and numbered pages.
    add(db, "js.key.gte", api.url(),
        {"--paginate", "after-key", "--cursor-param", "id_gte", "--inclusive", "--limit-param", "_limit",
         "--batch-size", "40"});
    add(db, "js.id.gte", api.url(),
        {"--cursor-param", "id_gte", "--inclusive", "--limit-param", "_limit", "--batch-size", "60"});
    add(db, "js.page.ok", api.url(),
        {"--paginate", "page", "--cursor-param", "_page", "--limit-param", "_limit", "--batch-size", "100"});
    names.insert(names.end(), {"js.key.gte", "js.id.gte", "js.page.ok"});

    load_until_idle(db);
    auto status = status_by_name(db.url());
    for (const auto& name : names) check_all_once(status, db, name, kRecords);

    // At the end of the stream, asked again: still ok, nothing stored twice. Then new records.
    load_until_idle(db);
    status = status_by_name(db.url());
    for (const auto& name : names) check_all_once(status, db, name, kRecords);
    api.append(kRecords + 1, kRecords + 30);
    load_until_idle(db);
    status = status_by_name(db.url());
    for (const auto& name : names) check_all_once(status, db, name, kRecords + 30);
}
