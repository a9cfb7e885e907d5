#include "admin_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tributary::console {

namespace {

std::array<unsigned char, 32> sha256(std::string_view text) {
    std::array<unsigned char, 32> digest{};
    unsigned int length = 0;
    if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
        length != digest.size())
        throw std::runtime_error("SHA-256 failed in OpenSSL");
    return digest;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
}

}  // namespace

AdminToken::AdminToken(std::string_view token) {
    if (token.empty()) throw std::invalid_argument("the admin token is empty");
    digest_ = sha256(token);
}

AdminToken AdminToken::from_environment(const std::string& variable) {
    const char* value = std::getenv(variable.c_str());
    if (!value) throw std::runtime_error("--token-env: the variable " + variable + " is not set");
    const auto token = without_trailing_newlines(value);
    if (token.empty()) throw std::runtime_error("--token-env: the variable " + variable + " is empty");
    return AdminToken(token);
}

AdminToken AdminToken::from_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("--token-file: cannot read " + path);
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw std::runtime_error("--token-file: cannot read " + path);
    const std::string content = text.str();
    const auto token = without_trailing_newlines(content);
    if (token.empty()) throw std::runtime_error("--token-file: " + path + " is empty");
    return AdminToken(token);
}

bool AdminToken::matches(std::string_view presented) const {
    const auto digest = sha256(presented);
    return CRYPTO_memcmp(digest.data(), digest_.data(), digest.size()) == 0;
}

std::optional<std::string_view> bearer_token(std::string_view authorization) {
    constexpr std::string_view scheme = "bearer ";
    if (authorization.size() <= scheme.size() || !equals_ignoring_case(authorization.substr(0, scheme.size()), scheme))
        return std::nullopt;
    auto token = authorization.substr(scheme.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
    if (token.empty()) return std::nullopt;
    return token;
}

std::string_view without_trailing_newlines(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    return text;
}

}  // namespace tributary::console
