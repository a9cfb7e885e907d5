#include <catch2/catch.hpp>

#include "http/next_link_policy.h"

using namespace tributary;

namespace {

const std::string kSource = "https://api.example.com/v1/events?type=all";

std::string followed(const std::string& reference, const std::vector<std::string>& allowed = {}) {
    const auto result =
        resolve_next_link(kSource, "https://api.example.com/v1/events?type=all&page=2", reference, allowed);
    if (const auto* refused = std::get_if<RefusedLink>(&result)) return "refused: " + refused->why;
    return std::get<std::string>(result);
}

}  // namespace

TEST_CASE("relative and absolute references resolve against the URL asked", "[next-link]") {
    CHECK(followed("https://api.example.com/v1/events?page=3") == "https://api.example.com/v1/events?page=3");
    CHECK(followed("/v1/events?page=3") == "https://api.example.com/v1/events?page=3");
    CHECK(followed("?page=3") == "https://api.example.com/v1/events?page=3");
    CHECK(followed("more?page=3") == "https://api.example.com/v1/more?page=3");
    CHECK(followed("//api.example.com/v1/x") == "https://api.example.com/v1/x");
    // The same origin spelled otherwise (case, the default port) is the same origin.
    CHECK(followed("HTTPS://API.EXAMPLE.COM:443/v1/x").rfind("refused: ", 0) != 0);
    CHECK(followed("/v1/x#frag") == "https://api.example.com/v1/x");
}

TEST_CASE("another host, scheme or port is refused unless allowed", "[next-link]") {
    const auto other = followed("https://evil.example.net/steal?token=SECRET");
    CHECK(other.rfind("refused: ", 0) == 0);
    CHECK(other.find("evil.example.net") != std::string::npos);
    CHECK(other.find("SECRET") == std::string::npos);
    CHECK(other.find("--allow-redirect-host") != std::string::npos);

    CHECK(followed("http://api.example.com/v1/x").rfind("refused: ", 0) == 0);
    CHECK(followed("https://api.example.com:8443/v1/x").rfind("refused: ", 0) == 0);
    CHECK(followed("https://cdn.example.com/v1/x?page=3", {"CDN.example.com"}) ==
          "https://cdn.example.com/v1/x?page=3");
    CHECK(followed("https://cdn.example.com:8443/v1/x", {"cdn.example.com"}) == "https://cdn.example.com:8443/v1/x");
    // Allowed host, but down to cleartext.
    CHECK(followed("http://cdn.example.com/v1/x", {"cdn.example.com"}).rfind("refused: ", 0) == 0);
}

TEST_CASE("only http(s), never user info", "[next-link]") {
    CHECK(followed("file:///etc/passwd").rfind("refused: ", 0) == 0);
    CHECK(followed("gopher://api.example.com/x").rfind("refused: ", 0) == 0);
    const auto user = followed("https://me:pw@api.example.com/v1/x");
    CHECK(user.rfind("refused: ", 0) == 0);
    CHECK(user.find("pw") == std::string::npos);
    CHECK(followed("").rfind("refused: ", 0) == 0);
}
