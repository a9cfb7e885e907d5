#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "http/request_credentials.h"

using namespace tributary;

namespace {

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
    return [vars](const char* name) -> const char* {
        const auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
    };
}

}  // namespace

TEST_CASE("base64 pads as RFC 4648 says", "[credentials]") {
    CHECK(base64("") == "");
    CHECK(base64("f") == "Zg==");
    CHECK(base64("fo") == "Zm8=");
    CHECK(base64("foo") == "Zm9v");
    CHECK(base64("foob") == "Zm9vYg==");
    CHECK(base64("Aladdin:open sesame") == "QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
    CHECK(base64("\xff\xfe") == "//4=");
}

TEST_CASE("credentials become headers and query parameters", "[credentials]") {
    EnvAuth auth;
    auth.bearer = "STRIPE_KEY";
    auth.headers = {{"X-Api-Key", "API_KEY"}};
    auth.query = {{"api_key", "QUERY_KEY"}};
    const auto result =
        request_credentials(auth, env_of({{"STRIPE_KEY", "sk_1"}, {"API_KEY", "k2"}, {"QUERY_KEY", "a b&c"}}));
    const auto& credentials = std::get<RequestCredentials>(result);
    CHECK(credentials.headers == std::vector<std::string>{"Authorization: Bearer sk_1", "X-Api-Key: k2"});
    REQUIRE(credentials.query.size() == 1);
    CHECK(credentials.query[0] == std::make_pair(std::string("api_key"), std::string("a b&c")));
}

TEST_CASE("basic credentials are base64 of user:password", "[credentials]") {
    EnvAuth auth;
    auth.basic_user = "U";
    auth.basic_password = "P";
    const auto result = request_credentials(auth, env_of({{"U", "Aladdin"}, {"P", "open sesame"}}));
    CHECK(std::get<RequestCredentials>(result).headers ==
          std::vector<std::string>{"Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="});

    const auto colon = request_credentials(auth, env_of({{"U", "a:b"}, {"P", "secretpw"}}));
    const auto& failure = std::get<FetchResult>(colon);
    CHECK(failure.error.find("colon") != std::string::npos);
    CHECK(failure.error.find("secretpw") == std::string::npos);
}

TEST_CASE("a missing variable fails the source, naming it and its flag, never a value", "[credentials]") {
    EnvAuth auth;
    auth.bearer = "STRIPE_KEY";
    const auto result = request_credentials(auth, env_of({}));
    const auto& failure = std::get<FetchResult>(result);
    CHECK(failure.status == FetchResult::Status::failing);
    CHECK(failure.error == "environment variable STRIPE_KEY (--bearer-env) is not set in the loader's environment");

    auth = EnvAuth{};
    auth.basic_user = "U";
    auth.basic_password = "P";
    const auto half = request_credentials(auth, env_of({{"U", "someone"}}));
    CHECK(std::get<FetchResult>(half).error.find("P (--basic-env) is not set") != std::string::npos);
    CHECK(std::get<FetchResult>(half).error.find("someone") == std::string::npos);
}

TEST_CASE("values with a line break or empty are refused", "[credentials]") {
    EnvAuth auth;
    auth.headers = {{"X-Key", "K"}};
    for (const std::string value : {"a\r\nX-Evil: 1", "a\nb", "a\rb", ""}) {
        const auto result = request_credentials(auth, env_of({{"K", value}}));
        const auto& failure = std::get<FetchResult>(result);
        CHECK(failure.status == FetchResult::Status::failing);
        CHECK(failure.error.find("K (--header-env)") != std::string::npos);
        if (!value.empty()) CHECK(failure.error.find("Evil") == std::string::npos);
    }
    auth = EnvAuth{};
    auth.query = {{"key", "Q"}};
    CHECK(std::holds_alternative<FetchResult>(request_credentials(auth, env_of({{"Q", "x\ny"}}))));
}

TEST_CASE("no auth: nothing added", "[credentials]") {
    const auto result = request_credentials(EnvAuth{}, env_of({}));
    CHECK(std::get<RequestCredentials>(result).headers.empty());
    CHECK(std::get<RequestCredentials>(result).query.empty());
}

TEST_CASE("env_auth_problem checks names for source add", "[credentials]") {
    EnvAuth auth;
    CHECK_FALSE(env_auth_problem(auth));
    auth.bearer = "GITHUB_TOKEN";
    CHECK_FALSE(env_auth_problem(auth));
    auth.bearer = "1TOKEN";
    CHECK(env_auth_problem(auth));
    auth.bearer = "TOK-EN";
    CHECK(env_auth_problem(auth));

    auth = EnvAuth{};
    auth.basic_user = "USER";
    CHECK(env_auth_problem(auth));  // half a pair
    auth.basic_password = "_PASS9";
    CHECK_FALSE(env_auth_problem(auth));

    auth = EnvAuth{};
    auth.headers = {{"X Api", "KEY"}};
    CHECK(env_auth_problem(auth));
    auth.headers = {{"X-Api-Key", "KEY"}};
    CHECK_FALSE(env_auth_problem(auth));
    auth.query = {{"", "KEY"}};
    CHECK(env_auth_problem(auth));

    auth = EnvAuth{};
    auth.oauth2 = EnvAuth::OAuth2{"https://auth.example.com/token", "CLIENT_ID", "CLIENT_SECRET", ""};
    CHECK_FALSE(env_auth_problem(auth));
    auth.oauth2->token_url = "file:///etc/passwd";
    CHECK(env_auth_problem(auth));
    auth.oauth2->token_url = "https://auth.example.com/token";
    auth.oauth2->client_secret = "secret value";
    CHECK(env_auth_problem(auth));
}
