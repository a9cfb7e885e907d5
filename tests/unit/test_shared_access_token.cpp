#include <catch2/catch.hpp>

#include "core/shared_access_token.h"
#include "support/fake_access_tokens.h"
#include "support/fakes.h"

using namespace tributary;
using namespace std::chrono_literals;

namespace {

Source oauth2_source() {
    Source source;
    source.id = 7;
    source.name = "crm";
    source.endpoint.auth.oauth2 = EnvAuth::OAuth2{"https://auth.example.com/token", "ID", "SECRET", ""};
    return source;
}

struct TokenEndpoint {
    int calls = 0;
    std::optional<std::chrono::seconds> lifetime = 3600s;
    bool failing = false;

    TokenRequest request() {
        return [this](const Source&) -> std::variant<IssuedToken, FetchResult> {
            ++calls;
            if (failing) return FetchResult::failure(FetchResult::Status::transient, "token endpoint down");
            return IssuedToken{"token-" + std::to_string(calls), lifetime};
        };
    }
};

SharedAccessToken::Timing no_waiting() {
    SharedAccessToken::Timing timing;
    timing.wait_at_most = 0ms;
    return timing;
}

std::string value_of(const std::variant<AccessToken, FetchResult>& token) {
    if (const auto* failure = std::get_if<FetchResult>(&token)) return "failure: " + failure->error;
    return std::get<AccessToken>(token).value;
}

}  // namespace

TEST_CASE("renewal is due 60 s before expiry, or at half of a short lifetime", "[oauth2]") {
    CHECK(SharedAccessToken::renew_after(3600s) == 3540s);
    CHECK(SharedAccessToken::renew_after(120s) == 60s);
    CHECK(SharedAccessToken::renew_after(30s) == 15s);
}

TEST_CASE("two loaders share one token: the endpoint is asked once", "[oauth2]") {
    fakes::FakeClock clock;
    fakes::FakeAccessTokens store(clock);
    TokenEndpoint endpoint;
    StopSignal stop;
    SharedAccessToken first(store, endpoint.request(), stop, no_waiting());
    SharedAccessToken second(store, endpoint.request(), stop, no_waiting());
    const Source source = oauth2_source();

    CHECK(value_of(first.token_for(source)) == "token-1");
    CHECK(value_of(second.token_for(source)) == "token-1");
    CHECK(value_of(first.token_for(source)) == "token-1");
    CHECK(endpoint.calls == 1);

    clock.advance(3541s);  // renewal due
    CHECK(value_of(second.token_for(source)) == "token-2");
    CHECK(value_of(first.token_for(source)) == "token-2");
    CHECK(endpoint.calls == 2);
}

TEST_CASE("a 401 rejects the token: the next request gets a new one", "[oauth2]") {
    fakes::FakeClock clock;
    fakes::FakeAccessTokens store(clock);
    TokenEndpoint endpoint;
    StopSignal stop;
    SharedAccessToken first(store, endpoint.request(), stop, no_waiting());
    SharedAccessToken second(store, endpoint.request(), stop, no_waiting());
    const Source source = oauth2_source();

    const auto sent = std::get<AccessToken>(first.token_for(source));
    first.rejected(source, sent);
    CHECK(value_of(second.token_for(source)) == "token-2");
    first.rejected(source, sent);  // a late 401 to the old one changes nothing
    CHECK(value_of(first.token_for(source)) == "token-2");
    CHECK(endpoint.calls == 2);
}

TEST_CASE("while another loader refreshes, a valid token is used and none waits", "[oauth2]") {
    fakes::FakeClock clock;
    fakes::FakeAccessTokens store(clock);
    TokenEndpoint endpoint;
    StopSignal stop;
    SharedAccessToken loader(store, endpoint.request(), stop, no_waiting());
    const Source source = oauth2_source();
    CHECK(value_of(loader.token_for(source)) == "token-1");

    clock.advance(3541s);
    REQUIRE(store.try_become_refresher(source.id, 1, 30s));  // someone else is renewing
    CHECK(value_of(loader.token_for(source)) == "token-1");
    CHECK(endpoint.calls == 1);

    clock.advance(60s);  // expired, the other's lease still runs: transient
    REQUIRE(store.try_become_refresher(source.id, 1, 30s));
    const auto waiting = loader.token_for(source);
    REQUIRE(std::holds_alternative<FetchResult>(waiting));
    CHECK(std::get<FetchResult>(waiting).status == FetchResult::Status::transient);
    CHECK(endpoint.calls == 1);
}

TEST_CASE("a failed token request fails the fetch; a failed renewal keeps the valid token", "[oauth2]") {
    fakes::FakeClock clock;
    fakes::FakeAccessTokens store(clock);
    TokenEndpoint endpoint;
    StopSignal stop;
    SharedAccessToken loader(store, endpoint.request(), stop, no_waiting());
    const Source source = oauth2_source();

    endpoint.failing = true;
    CHECK(value_of(loader.token_for(source)) == "failure: token endpoint down");
    clock.advance(60s);  // the failed refresher's lease is over
    endpoint.failing = false;
    CHECK(value_of(loader.token_for(source)) == "token-2");

    clock.advance(3541s);
    endpoint.failing = true;
    CHECK(value_of(loader.token_for(source)) == "token-2");
}

TEST_CASE("a token without expires_in lives an hour", "[oauth2]") {
    fakes::FakeClock clock;
    fakes::FakeAccessTokens store(clock);
    TokenEndpoint endpoint;
    endpoint.lifetime.reset();
    StopSignal stop;
    SharedAccessToken loader(store, endpoint.request(), stop, no_waiting());
    const Source source = oauth2_source();
    CHECK(value_of(loader.token_for(source)) == "token-1");
    clock.advance(3500s);
    CHECK(value_of(loader.token_for(source)) == "token-1");
    clock.advance(41s);
    CHECK(value_of(loader.token_for(source)) == "token-2");
}
