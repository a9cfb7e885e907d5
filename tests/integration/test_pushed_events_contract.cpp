// The PushedEventStore contract (webhook/pushed_events.h), checked against
// PostgresPushedEvents on a real cluster, logged in as a member of
// tributary_receiver only, and against the fake the receiver's unit tests
// use, with the same expectations.

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "postgres/postgres_pushed_events.h"
#include "postgres/postgres_pushed_sources.h"
#include "postgres/postgres_session.h"
#include "support/fake_pushed_events.h"
#include "support/login_role.h"
#include "support/test_database.h"
#include "support/tributary_cli.h"

using namespace tributary;
using tributary::testing::TestDatabase;
using Stored = std::vector<std::optional<std::size_t>>;

namespace {

/// A store and the catalogue behind it.
class PushWorld {
public:
    virtual ~PushWorld() = default;
    virtual webhook::PushedEventStore& store() = 0;
    /// A pushed source that takes requests; returns its id.
    virtual int add_pushed(const std::string& name) = 0;
    /// Its requests are no longer taken: "paused", "removed", or "pulled"
    /// (a source asked over HTTP, which takes no pushes at all).
    virtual int refusing(const std::string& name, const std::string& why) = 0;
    /// The source's stored keys (in the order stored when keeps_order()).
    virtual std::vector<std::string> keys(int source_id) = 0;
    virtual std::string payload(int source_id, const std::string& key) = 0;
    /// Whether keys() tells the order events were stored in (the fake keeps none).
    virtual bool keeps_order() const = 0;
};

class FakeWorld : public PushWorld {
public:
    webhook::PushedEventStore& store() override { return store_; }
    int add_pushed(const std::string&) override { return ++last_id_; }
    int refusing(const std::string&, const std::string&) override {
        store_.set_accepting(++last_id_, false);
        return last_id_;
    }
    std::vector<std::string> keys(int source_id) override {
        std::vector<std::string> out;
        for (const auto& [key, payload] : store_.events(source_id)) out.push_back(key);
        return out;
    }
    std::string payload(int source_id, const std::string& key) override { return store_.events(source_id).at(key); }
    bool keeps_order() const override { return false; }

private:
    fakes::FakePushedEventStore store_;
    int last_id_ = 0;
};

class PostgresWorld : public PushWorld {
public:
    PostgresWorld() { db_.exec("GRANT tributary_receiver TO " + role_.name()); }
    webhook::PushedEventStore& store() override { return store_; }
    int add_pushed(const std::string& name) override {
        testing::run_tributary(db_.url(), {"source", "add", name, "--push", "--insecure-no-auth"});
        return id_of(name);
    }
    int refusing(const std::string& name, const std::string& why) override {
        if (why == "pulled") {
            testing::run_tributary(db_.url(), {"source", "add", name, "--url", "http://127.0.0.1:9/" + name});
            return id_of(name);
        }
        const int id = add_pushed(name);
        testing::run_tributary(db_.url(), {"source", why == "paused" ? "pause" : "remove", name});
        return id;
    }
    std::vector<std::string> keys(int source_id) override {
        const auto text = db_.scalar(
            "SELECT coalesce(json_agg(event_key ORDER BY seq), '[]')::text FROM tributary.events WHERE source_id = " +
            std::to_string(source_id));
        return nlohmann::json::parse(text).get<std::vector<std::string>>();
    }
    std::string payload(int source_id, const std::string& key) override {
        return db_.scalar("SELECT payload::text FROM tributary.events WHERE source_id = " + std::to_string(source_id) +
                          " AND event_key = '" + key + "'");
    }
    bool keeps_order() const override { return true; }

private:
    int id_of(const std::string& name) {
        return std::stoi(db_.scalar("SELECT id FROM tributary.sources WHERE name = '" + name + "'"));
    }

    TestDatabase db_;
    testing::LoginRole role_{db_, "receiver"};
    postgres::PostgresSession session_{testing::as_user(db_.url(), role_.name())};
    postgres::PostgresPushedEvents store_{session_};
};

std::unique_ptr<PushWorld> world(const std::string& kind) {
    if (kind == "fake") return std::make_unique<FakeWorld>();
    return std::make_unique<PostgresWorld>();
}

webhook::PushedBatch batch(int source_id, const std::vector<std::string>& keys) {
    webhook::PushedBatch b;
    b.source_id = source_id;
    b.source = "s" + std::to_string(source_id);
    for (const auto& key : keys) b.events.push_back({key, nlohmann::json{{"k", key}, {"n", 1}}.dump()});
    return b;
}

Stored store(PushWorld& w, const std::vector<webhook::PushedBatch>& batches) {
    std::vector<const webhook::PushedBatch*> requests;
    for (const auto& b : batches) requests.push_back(&b);
    return w.store().store(requests);
}

std::set<std::string> as_set(const std::vector<std::string>& keys) { return {keys.begin(), keys.end()}; }

}  // namespace

TEST_CASE("pushed events contract: the first occurrence of a key wins, counted for its request", "[webhook]") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    INFO(kind);
    auto w = world(kind);
    const int a = w->add_pushed("orders"), b = w->add_pushed("payments");

    // A key twice in one request, a key of the first request in the second,
    // and the same key in another source (keys are per source).
    const auto first = store(*w, {batch(a, {"k1", "k2", "k1"}), batch(a, {"k2", "k3"}), batch(b, {"k1"})});
    CHECK(first == Stored{2, 1, 1});
    CHECK(as_set(w->keys(a)) == std::set<std::string>{"k1", "k2", "k3"});
    CHECK(w->keys(b) == std::vector<std::string>{"k1"});
    CHECK(nlohmann::json::parse(w->payload(a, "k1")) == nlohmann::json{{"k", "k1"}, {"n", 1}});

    SECTION("repeats store nothing, and say so per request") {
        const auto again = store(*w, {batch(a, {"k3", "k1"}), batch(a, {"k4", "k2"}), batch(b, {"k1"})});
        CHECK(again == Stored{0, 1, 0});
        CHECK(as_set(w->keys(a)) == std::set<std::string>{"k1", "k2", "k3", "k4"});
        CHECK(w->keys(b).size() == 1);
    }
}

TEST_CASE("pushed events contract: a source that no longer takes pushes stores nothing, the others do", "[webhook]") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    const std::string why = GENERATE(as<std::string>{}, "paused", "removed", "pulled");
    INFO(kind << ", " << why);
    auto w = world(kind);
    const int ok = w->add_pushed("orders");
    const int gone = w->refusing("other", why);

    const auto stored = store(*w, {batch(ok, {"a"}), batch(gone, {"b", "c"}), batch(ok, {"d"})});
    CHECK(stored == Stored{1, std::nullopt, 1});
    CHECK(as_set(w->keys(ok)) == std::set<std::string>{"a", "d"});
    CHECK(w->keys(gone).empty());
}

TEST_CASE("pushed events contract: events are stored in the order of the requests, then of their events", "[webhook]") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    INFO(kind);
    auto w = world(kind);
    const int a = w->add_pushed("orders");
    // Keys out of alphabetical order, so that an order by key would show.
    const auto stored = store(*w, {batch(a, {"z", "m"}), batch(a, {"y"}), batch(a, {"b", "a"})});
    CHECK(stored == Stored{2, 1, 2});
    if (w->keeps_order()) CHECK(w->keys(a) == std::vector<std::string>{"z", "m", "y", "b", "a"});
    CHECK(as_set(w->keys(a)) == std::set<std::string>{"a", "b", "m", "y", "z"});
}

TEST_CASE("pushed events contract: keys that look like array syntax are stored as they are", "[webhook]") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    INFO(kind);
    auto w = world(kind);
    const int a = w->add_pushed("orders");
    const std::vector<std::string> odd{"NULL", "a,b", "{x}", "q\"uote", "back\\slash", " spaced ", "ünï"};
    const auto stored = store(*w, {batch(a, odd)});
    CHECK(stored == Stored{odd.size()});
    CHECK(as_set(w->keys(a)) == as_set(odd));
}

TEST_CASE("the pushed sources' catalogue: pushed sources only, enabled or not, a hand-edited row misconfigured",
          "[webhook]") {
    TestDatabase db;
    testing::LoginRole role{db, "receiver"};
    db.exec("GRANT tributary_receiver TO " + role.name());
    testing::run_tributary(db.url(), {"source", "add", "gh", "--push", "--signature", "github", "--hmac-secret-env",
                                      "GH_SECRET", "--key-header", "X-GitHub-Delivery"});
    testing::run_tributary(db.url(), {"source", "add", "paused", "--push", "--bearer-token-env", "TOKEN"});
    testing::run_tributary(db.url(), {"source", "pause", "paused"});
    testing::run_tributary(db.url(), {"source", "add", "broken", "--push", "--insecure-no-auth"});
    testing::run_tributary(db.url(), {"source", "add", "pulled", "--url", "http://127.0.0.1:9/x"});
    db.exec("UPDATE tributary.sources SET receiving = receiving - 'key' WHERE name = 'broken'");

    postgres::PostgresSession session(testing::as_user(db.url(), role.name()));
    postgres::PostgresPushedSources catalog(session);
    std::map<std::string, webhook::PushedSource> by_name;
    for (auto& source : catalog.pushed_sources()) by_name[source.name] = source;
    REQUIRE(by_name.size() == 3);
    const auto& gh = by_name.at("gh");
    CHECK(gh.enabled);
    CHECK(gh.auth.method == webhook::PushAuthentication::Method::signature);
    CHECK(gh.auth.name == "github");
    CHECK(gh.auth.variable == "GH_SECRET");
    CHECK(gh.key_header == "X-GitHub-Delivery");
    CHECK(gh.misconfigured.empty());
    CHECK_FALSE(by_name.at("paused").enabled);
    CHECK(by_name.at("paused").auth.method == webhook::PushAuthentication::Method::bearer);
    CHECK_THAT(by_name.at("broken").misconfigured, Catch::Contains("key"));
}
