// The AccessTokens contract (core/access_tokens.h), checked against
// PostgresAccessTokens on a real cluster and against the fake the unit tests
// use, with the same expectations. Only time differs: the fake's clock moves,
// the database's rows are dated back.

#include <catch2/catch.hpp>

#include <memory>

#include "postgres/postgres_access_tokens.h"
#include "postgres/postgres_session.h"
#include "postgres/postgres_source_registry.h"
#include "support/fake_access_tokens.h"
#include "support/fakes.h"
#include "support/test_database.h"

using namespace tributary;
using namespace std::chrono_literals;
using tributary::testing::TestDatabase;

namespace {

/// Two loaders on one shared store.
class TokenWorld {
public:
    virtual ~TokenWorld() = default;
    virtual AccessTokens& first() = 0;
    virtual AccessTokens& second() = 0;
    virtual int add_source(const std::string& name) = 0;
    /// `by` has passed on the store's clock.
    virtual void pass(int source_id, std::chrono::seconds by) = 0;
};

class FakeWorld : public TokenWorld {
public:
    AccessTokens& first() override { return tokens_; }
    AccessTokens& second() override { return tokens_; }
    int add_source(const std::string&) override { return ++last_id_; }
    void pass(int, std::chrono::seconds by) override { clock_.advance(by); }

private:
    fakes::FakeClock clock_;
    fakes::FakeAccessTokens tokens_{clock_};
    int last_id_ = 0;
};

class PostgresWorld : public TokenWorld {
public:
    AccessTokens& first() override { return first_; }
    AccessTokens& second() override { return second_; }
    int add_source(const std::string& name) override {
        postgres::PostgresSession session(db_.url());
        postgres::PostgresSourceRegistry registry(session);
        postgres::SourceSpec spec;
        spec.name = name;
        spec.url = "http://127.0.0.1:9/" + name;
        return registry.add(spec);
    }
    void pass(int source_id, std::chrono::seconds by) override {
        const std::string shift = "make_interval(secs => " + std::to_string(by.count()) + ")";
        db_.exec("UPDATE tributary.access_tokens SET expires_at = expires_at - " + shift + ", renew_at = renew_at - " +
                 shift + ", refreshing_until = refreshing_until - " + shift +
                 " WHERE source_id = " + std::to_string(source_id));
    }

private:
    TestDatabase db_;
    postgres::PostgresSession a_{db_.url()}, b_{db_.url()};
    postgres::PostgresAccessTokens first_{a_}, second_{b_};
};

std::unique_ptr<TokenWorld> world(const std::string& kind) {
    if (kind == "fake") return std::make_unique<FakeWorld>();
    return std::make_unique<PostgresWorld>();
}

}  // namespace

TEST_CASE("access tokens contract: one refresher at a time, then everyone reads its token", "[access_tokens]") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    CAPTURE(kind);
    auto w = world(kind);
    const int source = w->add_source("tokens.one");

    CHECK_FALSE(w->first().current(source));
    REQUIRE(w->first().try_become_refresher(source, 0, 30s));
    CHECK_FALSE(w->second().try_become_refresher(source, 0, 30s));  // the lease runs
    w->first().store(source, "token-1", 3600s, 3540s);

    const auto seen = w->second().current(source);
    REQUIRE(seen);
    CHECK(seen->value == "token-1");
    CHECK(seen->generation == 1);
    CHECK_FALSE(seen->renewal_due);
    // A loader that saw no token before the store does not ask again.
    CHECK_FALSE(w->second().try_become_refresher(source, 0, 30s));
}

TEST_CASE("access tokens contract: renewal due, then expiry", "[access_tokens]") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    CAPTURE(kind);
    auto w = world(kind);
    const int source = w->add_source("tokens.renew");
    REQUIRE(w->first().try_become_refresher(source, 0, 30s));
    w->first().store(source, "token-1", 100s, 50s);

    w->pass(source, 60s);
    const auto due = w->second().current(source);
    REQUIRE(due);
    CHECK(due->renewal_due);
    REQUIRE(w->second().try_become_refresher(source, due->generation, 30s));
    CHECK_FALSE(w->first().try_become_refresher(source, due->generation, 30s));
    CHECK(w->first().current(source)->value == "token-1");  // still valid meanwhile

    w->pass(source, 60s);  // expired; and the refresher's lease ran out
    CHECK_FALSE(w->first().current(source));
    REQUIRE(w->first().try_become_refresher(source, due->generation, 30s));
    w->first().store(source, "token-2", 100s, 50s);
    CHECK(w->second().current(source)->value == "token-2");
    CHECK(w->second().current(source)->generation == 2);
}

TEST_CASE("access tokens contract: a rejected token is used no more; an old rejection changes nothing",
          "[access_tokens]") {
    const std::string kind = GENERATE(as<std::string>{}, "fake", "PostgreSQL");
    CAPTURE(kind);
    auto w = world(kind);
    const int source = w->add_source("tokens.reject");
    const int other = w->add_source("tokens.other");
    REQUIRE(w->first().try_become_refresher(source, 0, 30s));
    w->first().store(source, "token-1", 3600s, 3540s);
    REQUIRE(w->first().try_become_refresher(other, 0, 30s));
    w->first().store(other, "other-1", 3600s, 3540s);

    w->second().reject(source, 1);
    CHECK_FALSE(w->first().current(source));
    CHECK(w->first().current(other));  // per source
    REQUIRE(w->first().try_become_refresher(source, 1, 30s));
    w->first().store(source, "token-2", 3600s, 3540s);
    w->second().reject(source, 1);  // a late 401 to the old token
    REQUIRE(w->first().current(source));
    CHECK(w->first().current(source)->value == "token-2");
}
