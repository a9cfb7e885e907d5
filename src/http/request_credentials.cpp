#include "request_credentials.h"

#include <cctype>
#include <string_view>

#include <spdlog/fmt/fmt.h>

namespace tributary {
namespace {

using Status = FetchResult::Status;

FetchResult variable_problem(const std::string& variable, const char* flag, const char* what) {
    return FetchResult::failure(
        Status::failing,
        fmt::format("environment variable {} ({}) {} in the loader's environment", variable, flag, what));
}

}  // namespace

std::variant<std::string, FetchResult> environment_value(const EnvLookup& env, const std::string& variable,
                                                         const char* flag) {
    const char* value = env(variable.c_str());
    if (value == nullptr) return variable_problem(variable, flag, "is not set");
    const std::string_view text(value);
    if (text.empty()) return variable_problem(variable, flag, "is empty");
    if (text.find_first_of("\r\n") != std::string_view::npos)
        return variable_problem(variable, flag, "holds a line break (refused)");
    return std::string(text);
}

namespace {

bool is_variable_name(const std::string& name) {
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    for (unsigned char c : name)
        if (!std::isalnum(c) && c != '_') return false;
    return true;
}

// RFC 9110 §5.6.2 token characters.
bool is_header_name(const std::string& name) {
    if (name.empty()) return false;
    for (unsigned char c : name)
        if (!std::isalnum(c) &&
            std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) == std::string_view::npos)
            return false;
    return true;
}

}  // namespace

std::string base64(const std::string& bytes) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const unsigned n = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                           static_cast<unsigned char>(bytes[i + 2]);
        out += {kAlphabet[n >> 18 & 63], kAlphabet[n >> 12 & 63], kAlphabet[n >> 6 & 63], kAlphabet[n & 63]};
    }
    if (i + 1 == bytes.size()) {
        const unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
        out += {kAlphabet[n >> 18 & 63], kAlphabet[n >> 12 & 63], '=', '='};
    } else if (i + 2 == bytes.size()) {
        const unsigned n = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8;
        out += {kAlphabet[n >> 18 & 63], kAlphabet[n >> 12 & 63], kAlphabet[n >> 6 & 63], '='};
    }
    return out;
}

std::variant<RequestCredentials, FetchResult> request_credentials(const EnvAuth& auth, const EnvLookup& env) {
    RequestCredentials credentials;
    if (!auth.bearer.empty()) {
        auto token = environment_value(env, auth.bearer, "--bearer-env");
        if (auto* failure = std::get_if<FetchResult>(&token)) return std::move(*failure);
        credentials.headers.push_back("Authorization: Bearer " + std::get<std::string>(token));
    }
    if (!auth.basic_user.empty()) {
        auto user = environment_value(env, auth.basic_user, "--basic-env");
        if (auto* failure = std::get_if<FetchResult>(&user)) return std::move(*failure);
        auto password = environment_value(env, auth.basic_password, "--basic-env");
        if (auto* failure = std::get_if<FetchResult>(&password)) return std::move(*failure);
        // RFC 7617: the user-id cannot hold a colon; the server would split there.
        if (std::get<std::string>(user).find(':') != std::string::npos)
            return variable_problem(auth.basic_user, "--basic-env", "holds a colon, which Basic auth cannot carry");
        credentials.headers.push_back("Authorization: Basic " +
                                      base64(std::get<std::string>(user) + ":" + std::get<std::string>(password)));
    }
    for (const auto& [name, variable] : auth.headers) {
        auto value = environment_value(env, variable, "--header-env");
        if (auto* failure = std::get_if<FetchResult>(&value)) return std::move(*failure);
        credentials.headers.push_back(name + ": " + std::get<std::string>(value));
    }
    for (const auto& [parameter, variable] : auth.query) {
        auto value = environment_value(env, variable, "--query-env");
        if (auto* failure = std::get_if<FetchResult>(&value)) return std::move(*failure);
        credentials.query.emplace_back(parameter, std::get<std::string>(value));
    }
    return credentials;
}

std::optional<std::string> env_auth_problem(const EnvAuth& auth) {
    auto bad_variable = [](const std::string& name, const char* flag) -> std::optional<std::string> {
        if (is_variable_name(name)) return std::nullopt;
        return fmt::format("{}: \"{}\" is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)", flag, name);
    };
    if (!auth.bearer.empty())
        if (auto why = bad_variable(auth.bearer, "--bearer-env")) return why;
    if (auth.basic_user.empty() != auth.basic_password.empty()) return std::string("--basic-env needs USERVAR:PASSVAR");
    if (!auth.basic_user.empty()) {
        if (auto why = bad_variable(auth.basic_user, "--basic-env")) return why;
        if (auto why = bad_variable(auth.basic_password, "--basic-env")) return why;
    }
    for (const auto& [name, variable] : auth.headers) {
        if (!is_header_name(name)) return fmt::format("--header-env: \"{}\" is not an HTTP header name", name);
        if (auto why = bad_variable(variable, "--header-env")) return why;
    }
    for (const auto& [parameter, variable] : auth.query) {
        if (parameter.empty()) return std::string("--query-env needs NAME=VAR with a NAME");
        if (auto why = bad_variable(variable, "--query-env")) return why;
    }
    if (auth.oauth2) {
        const auto& oauth2 = *auth.oauth2;
        const std::string_view url(oauth2.token_url);
        if (url.substr(0, 7) != "http://" && url.substr(0, 8) != "https://")
            return std::string("--oauth2-token-url must be an http:// or https:// URL");
        if (auto why = bad_variable(oauth2.client_id, "--client-id-env")) return why;
        if (auto why = bad_variable(oauth2.client_secret, "--client-secret-env")) return why;
        if (!auth.bearer.empty()) return std::string("--bearer-env and --oauth2-token-url both set Authorization");
    }
    if (!auth.bearer.empty() && !auth.basic_user.empty())
        return std::string("--bearer-env and --basic-env both set Authorization");
    return std::nullopt;
}

}  // namespace tributary
