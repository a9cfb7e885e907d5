// Checking a pushed request's signature (src/webhook): HMAC-SHA256 against
// published test vectors, then GitHub's and Stripe's schemes, every kind of
// tampering refused.
#include <catch2/catch.hpp>

#include "webhook/hmac_sha256.h"
#include "webhook/webhook_signature.h"

using namespace tributary::webhook;
using std::chrono::seconds;
using std::chrono::system_clock;

namespace {

const system_clock::time_point kNow{seconds(1700000000)};

std::string stripe_header(const std::string& secret, const std::string& body, std::int64_t time) {
    const auto t = std::to_string(time);
    return "t=" + t + ",v1=" + to_hex(hmac_sha256(secret, t + "." + body)) + ",v0=deadbeef";
}

}  // namespace

TEST_CASE("HMAC-SHA256 matches RFC 4231 and GitHub's documented example", "[webhook]") {
    // RFC 4231, test case 2.
    CHECK(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    // docs.github.com, "Validating webhook deliveries".
    CHECK(to_hex(hmac_sha256("It's a Secret to Everybody", "Hello, World!")) ==
          "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17");
    CHECK(to_base64("") == "");
    CHECK(to_base64("f") == "Zg==");
    CHECK(to_base64("foobar") == "Zm9vYmFy");
    CHECK(equal_in_constant_time("abc", "abc"));
    CHECK_FALSE(equal_in_constant_time("abc", "abd"));
    CHECK_FALSE(equal_in_constant_time("abc", "abcd"));
}

TEST_CASE("GitHub's signature: valid, and every tampering refused", "[webhook]") {
    const auto scheme = github_signature();
    const std::string secret = "It's a Secret to Everybody";
    const std::string body = "Hello, World!";
    const std::string good = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";
    CHECK(check_signature(scheme, good, body, secret, kNow) == SignatureVerdict::valid);
    CHECK(check_signature(scheme, "  " + good + " ", body, secret, kNow) == SignatureVerdict::valid);
    CHECK(check_signature(scheme, "sha256=757107EA0EB2509FC211221CCE984B8A37570B6D7586C22C46F4379C8B043E17", body,
                          secret, kNow) == SignatureVerdict::valid);

    CHECK(check_signature(scheme, good, "Hello, World?", secret, kNow) == SignatureVerdict::mismatch);  // a byte
    CHECK(check_signature(scheme, good, body + " ", secret, kNow) == SignatureVerdict::mismatch);
    CHECK(check_signature(scheme, good, body, "It's a secret to everybody", kNow) == SignatureVerdict::mismatch);
    CHECK(check_signature(scheme, good.substr(0, good.size() - 1), body, secret, kNow) == SignatureVerdict::mismatch);
    CHECK(check_signature(scheme, std::nullopt, body, secret, kNow) == SignatureVerdict::missing);
    CHECK(check_signature(scheme, "", body, secret, kNow) == SignatureVerdict::missing);
    CHECK(check_signature(scheme, good.substr(7), body, secret, kNow) == SignatureVerdict::malformed);  // no prefix
    CHECK(check_signature(scheme, "sha1=757107ea", body, secret, kNow) == SignatureVerdict::malformed);
    CHECK(check_signature(scheme, "sha256=not-hex", body, secret, kNow) == SignatureVerdict::malformed);
    CHECK(check_signature(scheme, "sha256=", body, secret, kNow) == SignatureVerdict::malformed);
}

TEST_CASE("A base64 HMAC scheme (Shopify's form)", "[webhook]") {
    SignatureScheme scheme;
    scheme.format = SignatureScheme::Format::hmac_base64;
    scheme.header = "X-Shopify-Hmac-Sha256";
    const std::string body = R"({"id":1})";
    const auto good = to_base64(hmac_sha256("s3cret", body));
    CHECK(check_signature(scheme, good, body, "s3cret", kNow) == SignatureVerdict::valid);
    CHECK(check_signature(scheme, good, R"({"id":2})", "s3cret", kNow) == SignatureVerdict::mismatch);
    CHECK(check_signature(scheme, to_hex(hmac_sha256("s3cret", body)), body, "s3cret", kNow) ==
          SignatureVerdict::mismatch);
}

TEST_CASE("Stripe's signature: valid within the tolerance, stale outside it, tampering refused", "[webhook]") {
    const auto scheme = stripe_signature(seconds(300));
    const std::string secret = "whsec_test";
    const std::string body = R"({"id":"evt_1","type":"charge.succeeded"})";
    const std::int64_t now = 1700000000;
    CHECK(check_signature(scheme, stripe_header(secret, body, now), body, secret, kNow) == SignatureVerdict::valid);
    CHECK(check_signature(scheme, stripe_header(secret, body, now - 300), body, secret, kNow) ==
          SignatureVerdict::valid);
    CHECK(check_signature(scheme, stripe_header(secret, body, now - 301), body, secret, kNow) ==
          SignatureVerdict::stale);
    CHECK(check_signature(scheme, stripe_header(secret, body, now + 301), body, secret, kNow) ==
          SignatureVerdict::stale);
    // A rolled secret: Stripe sends a v1 per secret; any one that matches will do.
    const auto two = "t=" + std::to_string(now) + ",v1=" + std::string(64, '0') + "," +
                     stripe_header(secret, body, now).substr(std::string("t=1700000000,").size());
    CHECK(check_signature(scheme, two, body, secret, kNow) == SignatureVerdict::valid);

    CHECK(check_signature(scheme, stripe_header(secret, body, now), body + "\n", secret, kNow) ==
          SignatureVerdict::mismatch);
    CHECK(check_signature(scheme, stripe_header("whsec_other", body, now), body, secret, kNow) ==
          SignatureVerdict::mismatch);
    // The time is signed: moving it breaks the signature rather than the tolerance.
    auto moved = stripe_header(secret, body, now - 1000);
    moved.replace(2, 10, std::to_string(now));
    CHECK(check_signature(scheme, moved, body, secret, kNow) == SignatureVerdict::mismatch);

    CHECK(check_signature(scheme, std::nullopt, body, secret, kNow) == SignatureVerdict::missing);
    CHECK(check_signature(scheme, "v1=abcd", body, secret, kNow) == SignatureVerdict::malformed);  // no time
    CHECK(check_signature(scheme, "t=1700000000", body, secret, kNow) == SignatureVerdict::malformed);
    CHECK(check_signature(scheme, "t=17e8,v1=ab", body, secret, kNow) == SignatureVerdict::malformed);
    CHECK(check_signature(scheme, "t=1,t=2,v1=ab", body, secret, kNow) == SignatureVerdict::malformed);
    CHECK(check_signature(scheme, "garbage", body, secret, kNow) == SignatureVerdict::malformed);
}

TEST_CASE("describe says what was wrong, never a signature or the secret", "[webhook]") {
    const auto scheme = github_signature();
    for (const auto verdict : {SignatureVerdict::missing, SignatureVerdict::malformed, SignatureVerdict::mismatch,
                               SignatureVerdict::stale}) {
        const auto text = describe(verdict, scheme);
        CHECK(text.find("X-Hub-Signature-256") != std::string::npos);
        CHECK(text.find("757107") == std::string::npos);
    }
}
