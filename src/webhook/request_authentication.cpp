#include "request_authentication.h"

#include <algorithm>
#include <cctype>

#include "hmac_sha256.h"

namespace tributary::webhook {
namespace {

AuthVerdict refused(std::string reason) { return {AuthVerdict::Kind::refused, std::move(reason)}; }

bool starts_with_bearer(std::string_view value) {
    constexpr std::string_view kScheme = "bearer ";
    return value.size() >= kScheme.size() &&
           std::equal(kScheme.begin(), kScheme.end(), value.begin(),
                      [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
}

AuthVerdict check_bearer(const std::optional<std::string>& authorization, const std::string& token) {
    if (!authorization) return refused("no Authorization header: a bearer token is required");
    std::string_view value = *authorization;
    if (!starts_with_bearer(value)) return refused("the Authorization header is not a Bearer token");
    value.remove_prefix(7);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (!equal_in_constant_time(value, token)) return refused("the bearer token is not this source's");
    return {};
}

}  // namespace

AuthVerdict authenticate(const PushAuthentication& auth, const HeaderLookup& header, std::string_view body,
                         const EnvironmentLookup& environment, std::chrono::system_clock::time_point now) {
    if (auth.method == PushAuthentication::Method::none) return {};
    const std::optional<std::string> secret = environment(auth.variable);
    if (!secret || secret->empty()) return {AuthVerdict::Kind::no_secret, auth.variable};
    if (auth.method == PushAuthentication::Method::bearer) return check_bearer(header("Authorization"), *secret);

    const std::optional<std::string> value = header(auth.signature.header);
    std::optional<std::string_view> signature;
    if (value) signature = *value;
    const SignatureVerdict verdict = check_signature(auth.signature, signature, body, *secret, now);
    if (verdict != SignatureVerdict::valid) return refused(describe(verdict, auth.signature));
    return {};
}

}  // namespace tributary::webhook
