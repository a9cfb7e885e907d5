// docs/cookbook.md as it stands: each `tributary source add` line, pointed at the source
// server's fixture of its API, loads every record of the fixture once, byte for byte.

#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include "support/cookbook_lines.h"
#include "support/source_server.h"
#include "support/stored_truth.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary::testing;
using namespace std::chrono_literals;

namespace {

/// The cookbook's `tributary source add` commands but json-server's: their --url is json-server's
/// default address, and they run against the real json-server instead (test_json_server.cpp).
std::vector<std::string> source_add_commands() {
    std::vector<std::string> commands;
    for (auto& command : cookbook_source_add_commands())
        if (command.find("http://localhost:3000/") == std::string::npos) commands.push_back(std::move(command));
    return commands;
}

/// An API of the cookbook: its real base URL and the fixture that plays it.
struct Api {
    std::string real_base;  ///< as the cookbook writes it
    std::string fixture;    ///< the source server's route and truth style
    std::string fixture_base(const SourceServer& server, const std::string& source) const {
        if (fixture == "github") return server.base_url() + "/github";
        return server.base_url() + "/" + fixture + "/" + source;
    }
};

const std::vector<Api> kApis{
    {"https://api.github.com", "github"},         {"https://api.stripe.com", "stripe"},
    {"https://SHOP.myshopify.com", "shopify"},    {"https://slack.com", "slack"},
    {"https://SUBDOMAIN.zendesk.com", "zendesk"}, {"https://api.hubapi.com", "hubspot"},
};

/// The command's --url rewritten to the fixture; which API it is.
const Api& point_at_fixture(std::vector<std::string>& words, const SourceServer& server, const std::string& source) {
    const auto url = std::find(words.begin(), words.end(), "--url");
    REQUIRE(url != words.end());
    REQUIRE(url + 1 != words.end());
    auto& value = *(url + 1);
    for (const auto& api : kApis) {
        if (value.rfind(api.real_base, 0) != 0) continue;
        auto rest = value.substr(api.real_base.size());
        if (api.fixture == "github") {
            const std::string repo = "/repos/acme/widgets/";
            REQUIRE(rest.rfind(repo, 0) == 0);
            rest = "/repos/acme/" + source + "/" + rest.substr(repo.size());
        }
        value = api.fixture_base(server, source) + rest;
        return api;
    }
    FAIL("no fixture for " << value);
    throw std::logic_error("unreachable");
}

/// The environment variables the command's --*-env flags name, each with a dummy value.
std::vector<std::string> dummy_credentials(const std::vector<std::string>& words) {
    std::vector<std::string> env;
    for (std::size_t i = 0; i + 1 < words.size(); ++i) {
        const auto& flag = words[i];
        const auto& value = words[i + 1];
        std::vector<std::string> names;
        if (flag == "--bearer-env" || flag == "--client-id-env" || flag == "--client-secret-env") names = {value};
        else if (flag == "--basic-env") names = {value.substr(0, value.find(':')), value.substr(value.find(':') + 1)};
        else if (flag == "--header-env") names = {value.substr(value.find(':') + 2)};
        else if (flag == "--query-env") names = {value.substr(value.find('=') + 1)};
        for (const auto& name : names) env.push_back(name + "=dummy-" + name);
    }
    return env;
}

std::vector<std::string> keys_of(const std::vector<std::string>& words) {
    std::vector<std::string> keys;
    for (std::size_t i = 0; i + 1 < words.size(); ++i)
        if (words[i] == "--key") keys.push_back(words[i + 1]);
    return keys.empty() ? std::vector<std::string>{"/id"} : keys;
}

}  // namespace

TEST_CASE("every source add line of the cookbook loads its API's fixture exactly once, byte for byte", "[cookbook]") {
    const auto commands = source_add_commands();
    REQUIRE(commands.size() == kApis.size());
    TestDatabase db;
    SourceServer server(
        {"--sources", std::to_string(commands.size()), "--prefix", "cb.", "--backlog", "300", "--threads", "16"});

    struct Added {
        std::string name, source, fixture;
        std::vector<std::string> keys;
    };
    std::vector<Added> added;
    std::vector<std::string> env;
    for (std::size_t i = 0; i < commands.size(); ++i) {
        INFO(commands[i]);
        auto words = shell_words(commands[i]);
        REQUIRE(words.size() > 4);
        const auto source = "cb." + std::to_string(i);
        const auto& api = point_at_fixture(words, server, source);
        words.erase(words.begin());  // "tributary": the binary under test instead
        run_tributary(db.url(), words);
        added.push_back({words[2], source, api.fixture, keys_of(words)});
        const auto credentials = dummy_credentials(words);
        env.insert(env.end(), credentials.begin(), credentials.end());
    }

    ChildProcess loader(tributary_args(db.url(), {"run", "--workers", "3", "--until-idle"}), env);
    REQUIRE(loader.wait_for(60s) == 0);
    INFO("loader:\n" << loader.err());
    const auto status = status_by_name(db.url());
    for (const auto& a : added) {
        INFO(a.fixture << ": " << status[a.name].dump());
        CHECK(status[a.name]["state"] == "ok");
        check_stored_exactly_once(db, server, a.name, a.source, a.fixture, {a.keys, ""});
    }
}
