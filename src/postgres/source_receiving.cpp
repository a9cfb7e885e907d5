#include "source_receiving.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tributary::postgres {

namespace {

using Method = webhook::PushAuthentication::Method;
using Format = webhook::SignatureScheme::Format;

[[noreturn]] void refuse(const std::string& member, const std::string& why) {
    throw std::runtime_error("tributary.sources.receiving: \"" + member + "\" " + why);
}

std::string text_member(const nlohmann::json& j, const char* name) {
    const auto it = j.find(name);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) refuse(name, "must be a non-empty string");
    return it->get<std::string>();
}

/// The method and scheme an auth name stands for; the variable and the
/// custom header are filled by the caller.
webhook::PushAuthentication authentication_named(const std::string& name, const nlohmann::json& j) {
    webhook::PushAuthentication auth;
    auth.name = name;
    if (name == "none") return auth;
    if (name == "bearer") {
        auth.method = Method::bearer;
        auth.variable = text_member(j, "bearer_token_env");
        return auth;
    }
    auth.method = Method::signature;
    auth.variable = text_member(j, "hmac_secret_env");
    if (name == "github") {
        auth.signature = webhook::github_signature();
    } else if (name == "stripe") {
        const auto tolerance = j.value("tolerance_s", 300);
        if (tolerance < 1 || tolerance > 86400) refuse("tolerance_s", "must be 1 to 86400");
        auth.signature = webhook::stripe_signature(std::chrono::seconds(tolerance));
    } else if (name == "hmac-hex" || name == "hmac-base64") {
        auth.signature.format = name == "hmac-hex" ? Format::hmac_hex : Format::hmac_base64;
        auth.signature.header = text_member(j, "signature_header");
        auth.signature.prefix = j.value("signature_prefix", "");
    } else {
        refuse("auth", "is not one of github, stripe, hmac-hex, hmac-base64, bearer, none");
    }
    return auth;
}

}  // namespace

std::string receiving_json(const webhook::PushedSource& source) {
    nlohmann::json j = nlohmann::json::object();
    const auto& auth = source.auth;
    j["auth"] = auth.name;
    if (auth.method == Method::bearer) j["bearer_token_env"] = auth.variable;
    if (auth.method == Method::signature) {
        j["hmac_secret_env"] = auth.variable;
        if (auth.name == "stripe") j["tolerance_s"] = auth.signature.tolerance.count();
        if (auth.name == "hmac-hex" || auth.name == "hmac-base64") {
            j["signature_header"] = auth.signature.header;
            if (!auth.signature.prefix.empty()) j["signature_prefix"] = auth.signature.prefix;
        }
    }
    j["key"] = source.key;
    j["key_header"] = source.key_header;
    j["max_body_bytes"] = source.max_body_bytes;
    return j.dump();
}

void read_receiving_json(const std::string& text, webhook::PushedSource& source) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) throw std::runtime_error("tributary.sources.receiving is not a JSON object");
    source.auth = authentication_named(text_member(j, "auth"), j);
    const auto key = j.find("key");
    if (key == j.end() || !key->is_array() || key->empty()) refuse("key", "must be a non-empty array of JSON pointers");
    source.key.clear();
    for (const auto& part : *key) {
        if (!part.is_string()) refuse("key", "must be a non-empty array of JSON pointers");
        source.key.push_back(part.get<std::string>());
    }
    source.key_header = j.value("key_header", "");
    const auto limit = j.find("max_body_bytes");
    if (limit == j.end() || !limit->is_number_unsigned() || limit->get<std::size_t>() == 0 ||
        limit->get<std::size_t>() > webhook::kLargestMaxBodyBytes)
        refuse("max_body_bytes", "must be 1 to " + std::to_string(webhook::kLargestMaxBodyBytes));
    source.max_body_bytes = limit->get<std::size_t>();
}

}  // namespace tributary::postgres
